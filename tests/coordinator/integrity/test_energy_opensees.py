"""A yielding run's energy balance beside OpenSees' own energies for the same model.

The models: an SDOF (1000 kg, k0 = 4e5 N/m, 3.18 Hz) on a Steel01 spring (u_y = 4 mm, b = 0.05), and a chain of two
such masses, ground - Steel01 A (4e5 N/m, u_y 4 mm) - x1 - Steel01 B (2e5 N/m, u_y 5 mm) - x2, one OpenSees module
of two DOFs; mass-proportional damping C = 0.4 M, the strong 5 s of El Centro x 0.6 (ductility 2.4 of the SDOF, 3.4
and more of the chain's springs, E_h 87-88 % of E_in). The hybrid: the coordinator and an OpenSees
module (its worker process). The oracle: the whole structure as one OpenSees model under its own transient
integrator, no hybridsim code, its energies from its own response by the trapezoidal rule below (nodeDisp, nodeVel,
each zeroLength's eleResponse force; recoverable f_e^2 / (2 k_e) per element, hysteretic the rest of the elements'
work). For the chain the module's 1/2 r^T K0^-1 r is the elements' sum exactly: r = B^T f, K0 = B^T diag(k) B with
B (element deformations from DOFs) square and invertible, so r^T K0^-1 r = f^T diag(k)^-1 f.

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
import pytest

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import MARTHS_DATA
from tests.modules.opensees.test_module import MODELS

MASS, B, RAYLEIGH_MASS, SCALE, DURATION, QUIET = 1000.0, 0.05, 0.4, 0.6, 5.0, 4.98
SDOF = ((4.0e5, 0.004),)
"""(k0 N/m, u_y m) of each spring from the ground up"""
CHAIN = ((4.0e5, 0.004), (2.0e5, 0.005))
TERMS = ("input", "kinetic", "damped", "elastic", "hysteretic", "residual")
NEWMARK = ("Newmark", 0.5, 0.25)


def strong_motion(tmp_path: Path) -> Path:
    """The shipped El Centro record from its last quiet sample (4.98 s; a run starts at rest): a CSV in ``tmp_path``."""
    record = np.loadtxt(MARTHS_DATA / "ground_motion_elcentro.csv", delimiter=",", skiprows=1)
    strong = record[record[:, 0] >= QUIET - 1e-9]
    path = tmp_path / "elcentro_strong.csv"
    path.write_text("time_s,accel_m_s2\n" + "".join(f"{t - QUIET:.4f},{a:.17g}\n" for t, a in strong))
    return path


def hybrid(tmp_path: Path, springs: tuple, dt: float, integrator: dict) -> tuple[dict[str, float], np.ndarray]:
    """The coordinator with the springs as one OpenSees module: the summary's balance (J) and the ground motion."""
    (k_a, u_a), *rest = springs
    parameters = {"fy": k_a * u_a, "e0": k_a, "b": B}
    if rest:
        (k_b, u_b), = rest
        parameters |= {"case": "series", "fy_b": k_b * u_b, "e0_b": k_b}
    dofs = [f"x{j + 1}" for j in range(len(springs))]
    control = [{"name": name, "node": j + 2, "dof": 1} for j, name in enumerate(dofs)]
    name = f"{len(springs)}-{integrator['kind']}-{dt}"
    table = {"experiment": {"name": name, "dt": dt, "duration": DURATION},
             "structure": {"dofs": dofs, "mass_diagonal": [MASS] * len(dofs), "influence": [1.0] * len(dofs),
                           "damping": {"rayleigh": [RAYLEIGH_MASS, 0.0]}},
             "ground_motion": {"file": str(strong_motion(tmp_path)), "scale": SCALE},
             "integrator": integrator,
             "modules": [{"name": "springs", "kind": "opensees",
                          "config": {"model": "springs.py", "parameters": parameters, "control": control}}],
             "integrity": {"site": [{"name": "springs", "energy_error": 1.0}]}}  # (no transfer system: never crossed)
    experiment = parse_experiment(table, base_dir=MODELS)
    result = run_experiment(experiment, output=tmp_path / f"{name}.h5")
    return result.summary["integrity"]["balance_j"], np.asarray(experiment.motion.acceleration, float)


def opensees_energies(springs: tuple, ground: np.ndarray, dt: float, integrator: tuple) -> dict[str, float]:
    """The chain as one OpenSees model under ``integrator`` (Newton to 1e-12; AlphaOS linear), its energies (J) by the trapezoidal
    rule over its own response: E_in = -sum m a_g dx, E_k = sum m v^2 / 2, E_d = sum c v dx, W_r = sum_e f_e de
    (de: the element's deformation), E_s,el = sum_e f_e^2 / (2 k_e), E_h = W_r - E_s,el, residual =
    E_in - E_k - E_d - W_r; and the peak deformation over each element's yield deformation."""
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(1, 0.0)
    ops.fix(1, 1)
    for e, (k0, uy) in enumerate(springs, start=1):
        ops.node(e + 1, 0.0)
        ops.mass(e + 1, MASS)
        ops.uniaxialMaterial("Steel01", e, k0 * uy, k0, B)
        ops.element("zeroLength", e, e, e + 1, "-mat", e, "-dir", 1)
    ops.rayleigh(RAYLEIGH_MASS, 0.0, 0.0, 0.0)
    ops.timeSeries("Path", 1, "-dt", dt, "-values", *ground, 0.0)  # (the Path gives 0 at its own end time)
    ops.pattern("UniformExcitation", 1, 1, "-accel", 1)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    ops.test("NormDispIncr", 1e-12, 50)
    ops.algorithm("Linear" if integrator[0] == "AlphaOS" else "Newton")  # (AlphaOS: one solve with K_I a step)
    ops.integrator(*integrator)
    ops.analysis("Transient")
    shape = (ground.size, len(springs))
    x, v, f = np.zeros((shape[0], shape[1] + 1)), np.zeros(shape), np.zeros(shape)
    for n in range(1, ground.size):
        assert ops.analyze(1, dt) == 0
        for e in range(1, len(springs) + 1):
            x[n, e], v[n, e - 1], f[n, e - 1] = ops.nodeDisp(e + 1, 1), ops.nodeVel(e + 1, 1), ops.eleResponse(e, "force")[1]
    ops.wipe()

    def work(force: np.ndarray, motion: np.ndarray) -> float:
        return 0.5 * float(np.sum((force[1:] + force[:-1]) * np.diff(motion, axis=0)))

    deformation, k0 = np.diff(x, axis=1), np.array([k for k, _ in springs])
    inp = work(-MASS * ground[:, None] * np.ones(shape), x[:, 1:])
    kinetic, damped = 0.5 * MASS * float(v[-1] @ v[-1]), work(RAYLEIGH_MASS * MASS * v, x[:, 1:])
    restoring, elastic = work(f, deformation), float(np.sum(f[-1] ** 2 / (2 * k0)))
    ductility = np.max(np.abs(deformation), axis=0) / np.array([u for _, u in springs])
    return {"input": inp, "kinetic": kinetic, "damped": damped, "elastic": elastic, "hysteretic": restoring - elastic,
            "residual": inp - kinetic - damped - restoring, "ductility": float(np.min(ductility))}


def differences(balance: dict[str, float], oracle: dict[str, float]) -> dict[str, float]:
    """|hybrid - OpenSees| / E_in of every term but the residual."""
    return {k: abs(balance[k] - oracle[k]) / oracle["input"] for k in TERMS[:-1]}


@pytest.mark.parametrize("springs", [SDOF, CHAIN], ids=["sdof", "chain"])
def test_a_yielding_newmark_run_has_opensees_own_energies_and_closes_its_balance(tmp_path, springs: tuple) -> None:
    dt = 0.01
    balance, ground = hybrid(tmp_path, springs, dt, {"kind": "newmark", "tolerance": 1e-12, "max_iterations": 200})
    oracle = opensees_energies(springs, ground, dt, NEWMARK)
    print(f"Newmark, {len(springs)} DOF, dt {dt}: E_in {oracle['input']:.4f} J, E_h {oracle['hysteretic']:.4f} J, "
          f"least ductility {oracle['ductility']:.2f}; largest difference {max(differences(balance, oracle).values()):.1e}"
          f" of E_in, residual {balance['residual']:.1e} J")
    assert oracle["ductility"] > 2 and oracle["hysteretic"] > 0.25 * oracle["input"]  # every spring yields, E_h a
    # large share of E_in (88 % for the SDOF, 87 % for the chain): the comparison is not of elastic runs
    assert max(differences(balance, oracle).values()) < 1e-9
    assert abs(balance["residual"]) < 1e-9 * balance["input"]


def test_a_yielding_alpha_os_run_converges_to_opensees_energies_at_second_order(tmp_path) -> None:
    gaps, residuals = [], []
    for dt in (0.01, 0.005):
        balance, ground = hybrid(tmp_path, SDOF, dt, {"kind": "alpha-os", "alpha": -0.05})
        gaps.append(differences(balance, opensees_energies(SDOF, ground, dt, NEWMARK)))
        residuals.append(abs(balance["residual"]) / balance["input"])
    print("alpha-OS vs OpenSees' Newmark, of E_in at dt 0.01 / 0.005: "
          + ", ".join(f"{k} {gaps[0][k]:.1e} / {gaps[1][k]:.1e}" for k in TERMS[:-1])
          + f"; residual {residuals[0]:.1e} / {residuals[1]:.1e}")
    for term in TERMS[:-1]:  # second order: 4 (measured 3.8-5.4)
        assert gaps[1][term] < gaps[0][term] / 3, term
    assert residuals[1] < residuals[0] / 3


@pytest.mark.long  # about 20 s: pytest -m long -s tests/coordinator/integrity/test_energy_opensees.py
def test_the_alpha_os_energies_converge_at_second_order_down_to_a_1_25_ms_step(tmp_path) -> None:
    """The study behind docs/integrity.md's table: alpha-OS against OpenSees' Newmark at four steps, and OpenSees'
    own AlphaOS (elements committed at the interpolated predictor) closing the same trapezoidal balance to first
    order only."""
    steps, gaps, residuals = (0.01, 0.005, 0.0025, 0.00125), [], []
    for dt in steps:
        balance, ground = hybrid(tmp_path, SDOF, dt, {"kind": "alpha-os", "alpha": -0.05})
        oracle, alpha_os = (opensees_energies(SDOF, ground, dt, scheme) for scheme in (NEWMARK, ("AlphaOS", 0.95)))
        gaps.append(differences(balance, oracle))
        residuals.append(abs(balance["residual"]) / balance["input"])
        print(f"dt {dt}: hybrid alpha-OS vs OpenSees' Newmark, of E_in: "
              + ", ".join(f"{k} {gaps[-1][k]:.1e}" for k in TERMS[:-1])
              + f"; hybrid residual {residuals[-1]:.1e}; OpenSees' AlphaOS residual "
              f"{abs(alpha_os['residual']) / oracle['input']:.1e}")
    for coarse, fine in zip(gaps, gaps[1:]):
        assert fine["input"] < coarse["input"] / 3 and fine["hysteretic"] < coarse["hysteretic"] / 3
