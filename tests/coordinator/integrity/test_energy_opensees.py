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
A redundant module (a yielding spring beside an elastic path through an internal node) keeps a self-equilibrated
force once it has yielded: its locked-in energy, the elements' sum less r^T K0^-1 r / 2, is in the balance's E_h.

- Newmark (average acceleration) on both sides solves the same equations at the same dt, each iterated to 1e-12:
  every energy agrees to 1e-9 of E_in, and the balance closes to 1e-9 of E_in, since the trapezoidal rule is that
  scheme's own (docs/integrity.md).
- alpha-OS (alpha = -0.05) is another scheme: second order, so its energies differ from OpenSees' Newmark by
  O(dt^2) and halving dt divides the difference by about 4 (3 asserted); its balance residual is its own
  numerical dissipation, which vanishes as dt does (divided by more than 3 when dt is halved).
Measured figures: docs/integrity.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import openseespy.opensees as ops
import pytest

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import MARTHS_DATA
from tests.modules.opensees.test_module import MODELS

MASS, B, RAYLEIGH_MASS, SCALE, DURATION, QUIET = 1000.0, 0.05, 0.4, 0.6, 5.0, 4.98
TERMS = ("input", "kinetic", "damped", "elastic", "hysteretic", "residual")
NEWMARK = ("Newmark", 0.5, 0.25)
ITERATED = {"kind": "newmark", "tolerance": 1e-12, "max_iterations": 200}


@dataclass(frozen=True)
class Case:
    """One model on both sides: the OpenSees module's file and parameters, its interface nodes (the structure's
    DOFs, MASS each; node 1 is the ground) and, for the oracle, its elements (node i, node j, material)."""

    name: str
    model: str
    parameters: dict
    interface: tuple[int, ...]
    elements: tuple[tuple[int, int, tuple], ...]


STEEL_A, STEEL_B = ("Steel01", 1600.0, 4.0e5, B), ("Steel01", 1000.0, 2.0e5, B)
"""(fy N, k0 N/m, b): u_y 4 and 5 mm"""
SDOF = Case("sdof", "springs.py", {"fy": 1600.0, "e0": 4.0e5, "b": B}, (2,), ((1, 2, STEEL_A),))
CHAIN = Case("chain", "springs.py", {"case": "series", "fy": 1600.0, "e0": 4.0e5, "b": B, "fy_b": 1000.0,
                                     "e0_b": 2.0e5}, (2, 3), ((1, 2, STEEL_A), (2, 3, STEEL_B)))
REDUNDANT = Case("redundant", "redundant_springs.py", {}, (2,),
                 ((1, 2, STEEL_A), (2, 3, ("Elastic", 3.0e5)), (1, 3, ("Elastic", 3.0e5))))


def initial_stiffness(material: tuple) -> float:
    """k0 (N/m) of a Steel01 (fy, E0, b) or Elastic (E) material."""
    return material[2] if material[0] == "Steel01" else material[1]


def strong_motion(tmp_path: Path) -> Path:
    """The shipped El Centro record from its last quiet sample (4.98 s; a run starts at rest): a CSV in ``tmp_path``."""
    record = np.loadtxt(MARTHS_DATA / "ground_motion_elcentro.csv", delimiter=",", skiprows=1)
    strong = record[record[:, 0] >= QUIET - 1e-9]
    path = tmp_path / "elcentro_strong.csv"
    path.write_text("time_s,accel_m_s2\n" + "".join(f"{t - QUIET:.4f},{a:.17g}\n" for t, a in strong))
    return path


def hybrid(tmp_path: Path, case: Case, dt: float, integrator: dict) -> tuple[dict[str, float], np.ndarray]:
    """The coordinator with the case's model as one OpenSees module: the summary's balance (J) and the ground
    motion."""
    dofs = [f"x{node}" for node in case.interface]
    control = [{"name": name, "node": node, "dof": 1} for name, node in zip(dofs, case.interface)]
    name = f"{case.name}-{integrator['kind']}-{dt}"
    table = {"experiment": {"name": name, "dt": dt, "duration": DURATION},
             "structure": {"dofs": dofs, "mass_diagonal": [MASS] * len(dofs), "influence": [1.0] * len(dofs),
                           "damping": {"rayleigh": [RAYLEIGH_MASS, 0.0]}},
             "ground_motion": {"file": str(strong_motion(tmp_path)), "scale": SCALE},
             "integrator": integrator,
             "modules": [{"name": "springs", "kind": "opensees",
                          "config": {"model": case.model, "parameters": case.parameters, "control": control}}],
             "integrity": {"site": [{"name": "springs", "energy_error": 1.0}]}}  # (no transfer system: never crossed)
    experiment = parse_experiment(table, base_dir=MODELS)
    result = run_experiment(experiment, output=tmp_path / f"{name}.h5")
    return result.summary["integrity"]["balance_j"], np.asarray(experiment.motion.acceleration, float)


def opensees_energies(case: Case, ground: np.ndarray, dt: float, integrator: tuple) -> dict[str, Any]:
    """The case as one OpenSees model under ``integrator`` (Newton to 1e-12; AlphaOS linear), its energies (J) by
    the trapezoidal rule over its own response: E_in = -sum m a_g dx, E_k = sum m v^2 / 2, E_d = sum c v dx,
    W_r = sum_e f_e de (de: the element's deformation), E_s,el = sum_e f_e^2 / (2 k_e), E_h = W_r - E_s,el,
    residual = E_in - E_k - E_d - W_r; the least ductility of its Steel01 elements; the last forces f_e (N)."""
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    nodes = sorted({node for i, j, _ in case.elements for node in (i, j)})
    for node in nodes:
        ops.node(node, 0.0)
    ops.fix(1, 1)
    for node in case.interface:
        ops.mass(node, MASS)
    for e, (i, j, material) in enumerate(case.elements, start=1):
        ops.uniaxialMaterial(material[0], e, *material[1:])
        ops.element("zeroLength", e, i, j, "-mat", e, "-dir", 1)
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
    x, v = np.zeros((ground.size, max(nodes) + 1)), np.zeros((ground.size, max(nodes) + 1))
    f = np.zeros((ground.size, len(case.elements)))
    for n in range(1, ground.size):
        assert ops.analyze(1, dt) == 0
        x[n, nodes], v[n, nodes] = [ops.nodeDisp(k, 1) for k in nodes], [ops.nodeVel(k, 1) for k in nodes]
        f[n] = [ops.eleResponse(e, "force")[1] for e in range(1, len(case.elements) + 1)]
    ops.wipe()

    def work(force: np.ndarray, motion: np.ndarray) -> float:
        return 0.5 * float(np.sum((force[1:] + force[:-1]) * np.diff(motion, axis=0)))

    masses = list(case.interface)
    deformation = np.stack([x[:, j] - x[:, i] for i, j, _ in case.elements], axis=1)
    k0 = np.array([initial_stiffness(m) for _, _, m in case.elements])
    inp = work(-MASS * ground[:, None] * np.ones((ground.size, len(masses))), x[:, masses])
    kinetic, damped = 0.5 * MASS * float(v[-1, masses] @ v[-1, masses]), work(RAYLEIGH_MASS * MASS * v[:, masses],
                                                                              x[:, masses])
    restoring, elastic = work(f, deformation), float(np.sum(f[-1] ** 2 / (2 * k0)))
    steel = [e for e, (_, _, m) in enumerate(case.elements) if m[0] == "Steel01"]
    ductility = [np.max(np.abs(deformation[:, e])) * k0[e] / case.elements[e][2][1] for e in steel]
    return {"input": inp, "kinetic": kinetic, "damped": damped, "elastic": elastic, "hysteretic": restoring - elastic,
            "residual": inp - kinetic - damped - restoring, "ductility": float(min(ductility)), "forces": f[-1]}


def differences(balance: dict[str, float], oracle: dict[str, float]) -> dict[str, float]:
    """|hybrid - OpenSees| / E_in of every term but the residual."""
    return {k: abs(balance[k] - oracle[k]) / oracle["input"] for k in TERMS[:-1]}


@pytest.mark.parametrize("case", [SDOF, CHAIN], ids=["sdof", "chain"])
def test_a_yielding_newmark_run_has_opensees_own_energies_and_closes_its_balance(tmp_path, case: Case) -> None:
    dt = 0.01
    balance, ground = hybrid(tmp_path, case, dt, ITERATED)
    oracle = opensees_energies(case, ground, dt, NEWMARK)
    print(f"Newmark, {case.name}, dt {dt}: E_in {oracle['input']:.4f} J, E_h {oracle['hysteretic']:.4f} J, "
          f"least ductility {oracle['ductility']:.2f}; largest difference {max(differences(balance, oracle).values()):.1e}"
          f" of E_in, residual {balance['residual']:.1e} J")
    assert oracle["ductility"] > 2 and oracle["hysteretic"] > 0.25 * oracle["input"]  # every spring yields, E_h a
    # large share of E_in (88 % for the SDOF, 87 % for the chain): the comparison is not of elastic runs
    assert max(differences(balance, oracle).values()) < 1e-9
    assert abs(balance["residual"]) < 1e-9 * balance["input"]


def test_a_redundant_module_keeps_locked_in_energy_that_its_balance_counts_as_hysteretic(tmp_path) -> None:
    """ground -A- x2 -B- node 3 -C- ground, A Steel01 (4e5 N/m, u_y 4 mm), B and C elastic (3e5 N/m), node 3 inside
    the module: once A has yielded, a self-equilibrated force stays in it at r = 0. The balance sees the interface
    only: its E_s,el is r^2 / (2 K0), K0 = k_a + k_b k_c / (k_b + k_c), which the complementary energy theorem
    (of the forces in equilibrium with r, the elastic ones make sum f^2 / (2 k) least) puts at or below the
    elements' sum f_e^2 / (2 k_e): their difference, the locked-in energy, is in the balance's E_h."""
    dt = 0.01
    balance, ground = hybrid(tmp_path, REDUNDANT, dt, ITERATED)
    oracle = opensees_energies(REDUNDANT, ground, dt, NEWMARK)
    k_a, k_b, k_c = (initial_stiffness(material) for _, _, material in REDUNDANT.elements)
    f_a, f_b, _ = oracle["forces"]
    r = f_a - f_b  # node 2 is A's end j and B's end i
    interface = r**2 / (2 * (k_a + k_b * k_c / (k_b + k_c)))
    locked = oracle["elastic"] - interface
    print(f"redundant module, Newmark, dt {dt}: ductility {oracle['ductility']:.2f}, E_h {oracle['hysteretic']:.4f} J "
          f"(the elements'), locked-in {locked:.4f} J ({locked / oracle['hysteretic']:.1%} of it), r^2 / (2 K0) "
          f"{interface:.4f} J against the balance's E_s,el {balance['elastic']:.4f} J")
    assert oracle["ductility"] > 2 and locked > 1e-3 * oracle["hysteretic"]  # (A yielded: the inequality is strict)
    assert max(abs(balance[k] - oracle[k]) / oracle["input"] for k in ("input", "kinetic", "damped")) < 1e-9
    assert abs(balance["elastic"] - interface) < 1e-9 * oracle["input"]
    assert abs(balance["hysteretic"] - (oracle["hysteretic"] + locked)) < 1e-9 * oracle["input"]


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
