"""A yielding run's energy balance beside OpenSees' own energies for the same model.

The model: an SDOF (1000 kg, k0 = 4e5 N/m, 3.18 Hz) on a Steel01 spring (u_y = 4 mm, b = 0.05), mass-proportional
damping C = 0.4 M, El Centro x 3 for 6 s (peak 14.8 mm: 3.7 u_y). The hybrid: the coordinator and an OpenSees
module (the spring, its worker process). The oracle: the whole SDOF as one OpenSees model under its own transient
integrator, no hybridsim code, its energies from its own response by the trapezoidal rule below (nodeDisp,
nodeVel, the zeroLength's eleResponse force; recoverable f^2 / (2 k0), hysteretic the rest of the restoring work).

- Newmark (average acceleration) on both sides solves the same equations at the same dt, each iterated to 1e-12:
  every energy agrees to 1e-9 of E_in, and the balance closes to 1e-9 of E_in, since the trapezoidal rule is that
  scheme's own (docs/integrity.md).
- alpha-OS (alpha = -0.05) is another scheme: second order, so its energies differ from OpenSees' Newmark by
  O(dt^2) and halving dt divides the difference by about 4 (3 asserted); its balance residual is its own
  numerical dissipation, which vanishes as dt does (divided by more than 3 when dt is halved).
Measured figures: docs/integrity.md.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openseespy.opensees as ops

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import MARTHS_DATA
from tests.modules.opensees.test_module import MODELS

MASS, K0, UY, B, RAYLEIGH_MASS, SCALE, DURATION = 1000.0, 4.0e5, 0.004, 0.05, 0.4, 3.0, 6.0
TERMS = ("input", "kinetic", "damped", "elastic", "hysteretic", "residual")


def hybrid(tmp_path: Path, dt: float, integrator: dict) -> tuple[dict[str, float], np.ndarray]:
    """The coordinator with the spring as an OpenSees module: the summary's balance (J) and the ground motion."""
    spring = {"model": "springs.py", "parameters": {"fy": K0 * UY, "e0": K0, "b": B},
              "control": [{"name": "x", "node": 2, "dof": 1}]}
    name = f"{integrator['kind']}-{dt}"
    table = {"experiment": {"name": name, "dt": dt, "duration": DURATION},
             "structure": {"dofs": ["x"], "mass_diagonal": [MASS], "influence": [1.0],
                           "damping": {"rayleigh": [RAYLEIGH_MASS, 0.0]}},
             "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": SCALE},
             "integrator": integrator,
             "modules": [{"name": "spring", "kind": "opensees", "config": spring}],
             "integrity": {"site": [{"name": "spring", "energy_error": 1.0}]}}  # (no transfer system: never crossed)
    experiment = parse_experiment(table, base_dir=MODELS)
    result = run_experiment(experiment, output=tmp_path / f"{name}.h5")
    return result.summary["integrity"]["balance_j"], np.asarray(experiment.motion.acceleration, float)


def opensees_energies(ground: np.ndarray, dt: float, integrator: tuple) -> dict[str, float]:
    """The SDOF as one OpenSees model under ``integrator`` (Newton to 1e-12), its energies (J) by the trapezoidal
    rule over its own response: E_in = -sum m a_g dx, E_k = m v^2 / 2, E_d = sum c v dx, W_r = sum f dx,
    E_s,el = f^2 / (2 k0), E_h = W_r - E_s,el, residual = E_in - E_k - E_d - W_r; and the peak |x| (m)."""
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(1, 0.0)
    ops.node(2, 0.0)
    ops.fix(1, 1)
    ops.mass(2, MASS)
    ops.uniaxialMaterial("Steel01", 1, K0 * UY, K0, B)
    ops.element("zeroLength", 1, 1, 2, "-mat", 1, "-dir", 1)
    ops.rayleigh(RAYLEIGH_MASS, 0.0, 0.0, 0.0)
    ops.timeSeries("Path", 1, "-dt", dt, "-values", *ground, 0.0)  # (the Path gives 0 at its own end time)
    ops.pattern("UniformExcitation", 1, 1, "-accel", 1)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    ops.test("NormDispIncr", 1e-12, 50)
    ops.algorithm("Newton")
    ops.integrator(*integrator)
    ops.analysis("Transient")
    x, v, f = np.zeros(ground.size), np.zeros(ground.size), np.zeros(ground.size)
    for n in range(1, ground.size):
        assert ops.analyze(1, dt) == 0
        x[n], v[n], f[n] = ops.nodeDisp(2, 1), ops.nodeVel(2, 1), ops.eleResponse(1, "force")[1]
    ops.wipe()
    dx = np.diff(x)

    def work(force: np.ndarray) -> float:
        return 0.5 * float(np.sum((force[1:] + force[:-1]) * dx))

    inp, kinetic, damped, restoring = work(-MASS * ground), 0.5 * MASS * v[-1] ** 2, work(RAYLEIGH_MASS * MASS * v), work(f)
    elastic = f[-1] ** 2 / (2 * K0)
    return {"input": inp, "kinetic": kinetic, "damped": damped, "elastic": elastic, "hysteretic": restoring - elastic,
            "residual": inp - kinetic - damped - restoring, "peak": float(np.max(np.abs(x)))}


def differences(balance: dict[str, float], oracle: dict[str, float]) -> dict[str, float]:
    """|hybrid - OpenSees| / E_in of every term but the residual."""
    return {k: abs(balance[k] - oracle[k]) / oracle["input"] for k in TERMS[:-1]}


NEWMARK = ("Newmark", 0.5, 0.25)


def test_a_yielding_newmark_run_has_opensees_own_energies_and_closes_its_balance(tmp_path) -> None:
    dt = 0.01
    balance, ground = hybrid(tmp_path, dt, {"kind": "newmark", "tolerance": 1e-12, "max_iterations": 200})
    oracle = opensees_energies(ground, dt, NEWMARK)
    print(f"Newmark, dt {dt}: E_in {oracle['input']:.4f} J, E_h {oracle['hysteretic']:.4f} J; largest difference "
          f"{max(differences(balance, oracle).values()):.1e} of E_in, residual {balance['residual']:.1e} J")
    assert oracle["peak"] > 3 * UY and oracle["hysteretic"] > 0.5 * oracle["input"]  # it yields, and dissipates
    assert max(differences(balance, oracle).values()) < 1e-9
    assert abs(balance["residual"]) < 1e-9 * balance["input"]


def test_a_yielding_alpha_os_run_converges_to_opensees_energies_at_second_order(tmp_path) -> None:
    gaps, residuals = [], []
    for dt in (0.01, 0.005):
        balance, ground = hybrid(tmp_path, dt, {"kind": "alpha-os", "alpha": -0.05})
        gaps.append(differences(balance, opensees_energies(ground, dt, NEWMARK)))
        residuals.append(abs(balance["residual"]) / balance["input"])
    print("alpha-OS vs OpenSees' Newmark, of E_in at dt 0.01 / 0.005: "
          + ", ".join(f"{k} {gaps[0][k]:.1e} / {gaps[1][k]:.1e}" for k in TERMS[:-1])
          + f"; residual {residuals[0]:.1e} / {residuals[1]:.1e}")
    for term in TERMS[:-1]:  # second order: 4 (measured 3.8-3.9)
        assert gaps[1][term] < gaps[0][term] / 3, term
    assert residuals[1] < residuals[0] / 3
