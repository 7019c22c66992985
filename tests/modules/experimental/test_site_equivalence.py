"""The generic experimental site against the numerical modules it must reproduce, in hybrid runs.

An experimental site with ideal actuators and a virtual specimen, driven through any setup, is the
numerical module of the same specimen: the actuators reach every command exactly at the end of its
sample, the setup's inverse returns the pose, and the load cells carry f with J^T f = R, so the
site's J^T f is R.  Against `linear` (1e-9), `spring` (bilinear, Bouc-Wen, 1e-9) and `opensees` (1e-8).
With first-order actuators a/(s + a) the loop lags by tau = alpha dt / (1 - alpha) (alpha =
exp(-a dt)), and a lag in the restoring force is negative damping (Horiuchi et al. 1999): the
free vibration of an SDOF decays at the rate of the root of m s^2 + c s + k exp(-s tau) = 0;
inverse compensation of that lag restores the damping.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import RunResult, run_experiment
from hybridsim.modules.experimental.setups.kinds import build_setup
from tests.modules.experimental.test_setups import SETUPS

OPENSEES_MODELS = Path(__file__).resolve().parents[1] / "opensees" / "models"


def pulse(folder: Path, dt: float, duration: float, amplitude: float, frequency: float, decay: float,
          until: float = np.inf) -> None:
    """A ground acceleration a sin(2 pi f t) exp(-decay t), zero after ``until`` (m/s^2), as pulse.csv."""
    t = np.arange(0.0, duration, dt)
    ag = np.where(t < until, amplitude * np.sin(2 * np.pi * frequency * t) * np.exp(-decay * t), 0.0)
    np.savetxt(folder / "pulse.csv", np.column_stack([t, ag]), delimiter=",")


def run(folder: Path, dofs: list[str], kinds: list[str], module: dict[str, Any], dt: float, name: str,
        damping: dict[str, Any] | None = None, mass: list[float] | None = None) -> RunResult:
    """A hybrid run of one module over ``dofs`` (masses 1000 kg, 40 kg m^2) under pulse.csv along the first DOF."""
    table = {"experiment": {"name": name, "dt": dt},
             "structure": {"dofs": dofs, "influence": [1.0] + [0.0] * (len(dofs) - 1),
                           "mass_diagonal": mass or [1000.0 if k == "translation" else 40.0 for k in kinds],
                           "damping": damping or {"rayleigh": [0.5, 0.0]}},
             "ground_motion": {"file": "pulse.csv"}, "integrator": {"kind": "alpha-os", "alpha": -0.05},
             "modules": [{"name": "specimen", **module}], "output": {"file": f"{name}.h5"}}
    return run_experiment(parse_experiment(table, base_dir=folder), output=folder / f"{name}.h5", overwrite=True)


def site(setup: dict[str, Any], specimen: dict[str, Any], dt: float, actuators: list[dict[str, Any]],
         compensator: dict[str, Any] | None = None) -> dict[str, Any]:
    """An experimental site module over ``setup`` whose virtual lab holds ``specimen``."""
    count = len(actuators)
    return {"kind": "experimental", "config": {
        "dt": dt, "setup": setup, "actuators": [{"compensator": compensator or {"kind": "none"}}] * count,
        "backend": {"plant": {"dt": dt, "dofs": [f"actuator_{i + 1}" for i in range(count)], "actuators": actuators,
                              "specimen": specimen}}}}


def difference(a: RunResult, b: RunResult) -> tuple[float, float]:
    """max |a - b| / max |b| over every DOF and step: displacements, restoring forces."""
    return tuple(float(np.max(np.abs(x - y)) / np.max(np.abs(y)))  # type: ignore[return-value]
                 for x, y in ((a.displacement, b.displacement), (a.restoring_force, b.restoring_force)))


@pytest.mark.parametrize("name", ["one-actuator", "two-actuators-2d", "three-actuators-2d-offsets",
                                  "inverted-v-brace", "four-actuators-3d", "loading-platform", "linear", "none"])
def test_ideal_actuators_and_a_linear_specimen_are_the_linear_module(tmp_path: Path, name: str) -> None:
    table, _ = SETUPS[name]
    setup = build_setup(table)
    dofs, kinds = [d.name for d in setup.dofs], [d.kind for d in setup.dofs]
    n, dt = len(dofs), 0.002
    rng = np.random.default_rng(0)
    a = rng.normal(size=(n, n))
    stiffness = ((a @ a.T + n * np.eye(n)) * 1e5).tolist()
    pulse(tmp_path, dt, 1.0 if name == "loading-platform" else 2.0, 3.0, 1.5, 1.0)
    numerical = run(tmp_path, dofs, kinds, {"kind": "linear", "config": {"dofs": dofs, "kinds": kinds,
                                                                         "stiffness": stiffness}}, dt, "linear")
    hybrid = run(tmp_path, dofs, kinds, site(table, {"kind": "linear", "stiffness": stiffness}, dt,
                                             [{"model": "ideal"}] * setup.actuators), dt, "site")
    assert np.max(np.abs(numerical.displacement[:, 0])) > 5e-3  # the rig moves by millimetres
    print(f"{name}: linear specimen vs linear module, relative difference {difference(hybrid, numerical)}")
    assert max(difference(hybrid, numerical)) <= 1e-9


@pytest.mark.parametrize("law", [
    {"law": "bilinear", "stiffness": 4.0e5, "yield_displacement": 0.01, "hardening_ratio": 0.05},
    {"law": "bouc-wen", "stiffness": 4.0e5, "post_yield_ratio": 0.05, "exponent": 2.0, "gamma": 5000.0,
     "beta": 5000.0}], ids=["bilinear", "bouc-wen"])
def test_a_hysteretic_specimen_is_the_spring_module(tmp_path: Path, law: dict[str, Any]) -> None:
    dt = 0.002
    pulse(tmp_path, dt, 3.0, 8.0, 1.0, 0.5)
    numerical = run(tmp_path, ["u"], ["translation"], {"kind": "spring", "config": {"dofs": ["u"], **law}}, dt,
                    "spring")
    hybrid = run(tmp_path, ["u"], ["translation"], site({"kind": "one-actuator", "dof": "u"},
                                                        {"kind": "spring", **law}, dt, [{"model": "ideal"}]), dt, "site")
    assert np.max(np.abs(numerical.displacement)) > 3 * 0.01  # well past yield (10 mm)
    print(f"{law['law']} specimen vs spring module, relative difference {difference(hybrid, numerical)}")
    assert max(difference(hybrid, numerical)) <= 1e-9


def test_an_openseespy_specimen_is_the_opensees_module(tmp_path: Path) -> None:
    """A steel cantilever column (elasticBeamColumn) at its top's x and rotation, under two actuators."""
    shutil.copy(OPENSEES_MODELS / "columns.py", tmp_path / "columns.py")
    model = {"model": "columns.py", "control": [{"name": "x", "node": 2, "dof": 1},
                                                {"name": "theta", "node": 2, "dof": 3}]}
    setup = {"kind": "two-actuators-2d", "lengths": [1.2, 1.0], "height": 0.5}
    dt = 0.002
    pulse(tmp_path, dt, 1.5, 3.0, 2.0, 1.0)
    dofs, kinds = ["x", "theta"], ["translation", "rotation"]
    numerical = run(tmp_path, dofs, kinds, {"kind": "opensees", "config": model}, dt, "opensees")
    hybrid = run(tmp_path, dofs, kinds, site(setup, {"kind": "opensees", **model}, dt, [{"model": "ideal"}] * 2),
                 dt, "site")
    assert np.max(np.abs(numerical.displacement[:, 0])) > 1e-3
    print(f"openseespy specimen vs opensees module, relative difference {difference(hybrid, numerical)}")
    assert max(difference(hybrid, numerical)) <= 1e-8


def free_vibration_damping(result: RunResult, dt: float, after: float) -> float:
    """The damping ratio of the free vibration after ``after`` s: -sigma / |s| from the peaks' log decay."""
    x = result.displacement[:, 0]
    t = np.arange(x.size) * dt
    peaks = np.flatnonzero((x[1:-1] > x[:-2]) & (x[1:-1] >= x[2:])) + 1
    peaks = peaks[t[peaks] > after]
    sigma = -np.polyfit(t[peaks], np.log(x[peaks]), 1)[0]
    omega_d = 2 * np.pi / np.mean(np.diff(t[peaks]))
    return float(sigma / np.hypot(sigma, omega_d))


def delayed_damping(mass: float, damping: float, stiffness: float, tau: float) -> float:
    """-Re(s) / |s| of the root of m s^2 + c s + k exp(-s tau) = 0 next to the undelayed one (Newton)."""
    omega = np.sqrt(stiffness / mass)
    zeta = damping / (2 * mass * omega)
    s = complex(-zeta * omega, omega * np.sqrt(1 - zeta**2))
    for _ in range(50):
        s -= ((mass * s * s + damping * s + stiffness * np.exp(-s * tau))
              / (2 * mass * s + damping - stiffness * tau * np.exp(-s * tau)))
    return float(-s.real / abs(s))


def test_first_order_actuators_lose_the_damping_a_delay_predicts_and_compensation_restores_it(tmp_path) -> None:
    dt, bandwidth = 0.001, 700.0
    mass, omega, zeta = 1000.0, 2 * np.pi * 4.0, 0.02
    stiffness, damping = mass * omega**2, 2 * zeta * mass * omega
    alpha = np.exp(-bandwidth * dt)
    tau = alpha * dt / (1 - alpha)  # 0.986 ms: the low-frequency lag of a/(s + a) under a held command
    pulse(tmp_path, dt, 6.0, 4.0, 4.0, 0.0, until=0.125)

    def ratio(actuator: dict[str, Any], compensator: dict[str, Any] | None = None) -> float:
        result = run(tmp_path, ["u"], ["translation"],
                     site({"kind": "one-actuator"}, {"kind": "linear", "stiffness": [[stiffness]]}, dt, [actuator],
                          compensator), dt, "sdof", damping={"matrix": [[damping]]}, mass=[mass])
        return free_vibration_damping(result, dt, after=0.5)

    ideal = ratio({"model": "ideal"})
    lagging = ratio({"model": "first-order", "bandwidth": bandwidth})
    predicted = delayed_damping(mass, damping, stiffness, tau)  # 0.00760: zeta - omega tau / 2 to 1e-7
    compensated = ratio({"model": "first-order", "bandwidth": bandwidth},
                        {"kind": "polynomial", "order": 2, "delay": tau, "sample_period": dt})
    print(f"damping ratio: ideal {ideal:.5f}, first-order a = {bandwidth} {lagging:.5f} (delay analysis "
          f"{predicted:.5f}, tau {tau * 1e3:.3f} ms), compensated {compensated:.5f}")
    assert ideal == pytest.approx(zeta, rel=1e-3)
    assert (zeta - lagging) == pytest.approx(zeta - predicted, rel=0.01)  # the negative damping of the lag
    assert abs(compensated - zeta) < 0.01 * (zeta - lagging)
