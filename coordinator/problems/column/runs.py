"""The runs of `hybridsim study column`: the hybrid (the column in an `opensees` module whose axial DOF holds the
gravity load by force control, or as the virtual-lab specimen of an experimental site whose vertical actuator
holds it; the top's two lateral DOFs and their mass in the coordinator, integrated by its Newmark under two
[[excitation]] components) and one OpenSees model (the gravity stage, ``loadConst -time 0.0``, then Newmark's
average acceleration with Newton under two UniformExcitation patterns)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.shipped import resolve

MODEL = Path(__file__).with_name("model.py")
MASS, RAYLEIGH_A, RECORD_DT, DURATION = 2.0e4, 0.3, 0.02, 5.0
"""kg at the top in x and y; 1/s (mass-proportional damping); s, the record's step; s"""
START_Y, SCALE_Y = 1.0, 0.8
"""the second component: El Centro's strong motion again, 1 s later and scaled, along y"""
CASES = {"elastic": {"section": "elastic", "gravity": 1.5e6, "scale": 1.0},
         "steel01": {"section": "fibre", "gravity": 0.5e6, "scale": 1.5}}
"""the section, the gravity load (N; 27 % of the elastic column's Euler load, 15 % of the tube's squash load) and
the records' scale of each case"""
LAB = "lab-"
"""a case's prefix: the column as the virtual-lab specimen behind an experimental site"""
LAB_SAMPLES = 4
"""the site's control samples a step"""
AXIAL_STIFFNESS = 200e9 * 0.0096 / 3.0
"""N/m: E A / L of model.py's column, the site's force loop's stiffness along z"""


def records() -> np.ndarray:
    """El Centro from its last zero before the strong motion (m/s^2 at RECORD_DT), so both runs start at rest."""
    values = np.loadtxt(resolve("hybridsim:marths/ground_motion_elcentro.csv", Path(".")), delimiter=",",
                        skiprows=1)[:, 1]
    return values[249:249 + round(DURATION / RECORD_DT) + 1]


def hybrid(folder: Path, case: str, dt: float) -> np.ndarray:
    """The hybrid's top displacements (rows x [x, y], m) from the transient's start; ``case``: a key of CASES, or
    one prefixed LAB."""
    spec, record = CASES[case.removeprefix(LAB)], records()
    np.savetxt(folder / "H1.csv", np.column_stack([RECORD_DT * np.arange(record.size), spec["scale"] * record]),
               delimiter=",", fmt="%.17g")
    table: dict[str, Any] = {
        "experiment": {"name": f"column-{case}", "dt": dt, "duration": DURATION},
        "structure": {"dofs": ["x", "y"], "mass_diagonal": [MASS, MASS], "damping": {"rayleigh": [RAYLEIGH_A, 0.0]}},
        "excitation": [{"name": "H1", "file": str(folder / "H1.csv"), "influence_dofs": ["x"]},
                       {"name": "H2", "file": str(folder / "H1.csv"), "influence_dofs": ["y"], "scale": SCALE_Y,
                        "start_s": START_Y}],
        "integrator": {"kind": "newmark", "tolerance": 1e-12},
        "modules": [column_module(case, dt)],
        "output": {"file": str(folder / f"{case}-{dt:g}.h5")}}
    return run_experiment(parse_experiment(table, base_dir=MODEL.parent), overwrite=True).displacement


def column_module(case: str, dt: float) -> dict[str, Any]:
    """The column's module: an `opensees` module holding the axial force by its own load pattern, or (a LAB case)
    an experimental site whose virtual lab drives the same model through three ideal actuators at the top, the
    vertical one held at the gravity load by the site's force loop (docs/force_control.md)."""
    spec = CASES[case.removeprefix(LAB)]
    model = {"model": MODEL.name, "path_independent": spec["section"] == "elastic",
             "parameters": {"section": spec["section"]},
             "control": [{"name": "x", "node": 2, "dof": 1}, {"name": "y", "node": 2, "dof": 2}]}
    if not case.startswith(LAB):
        axial = {"name": "axial", "node": 2, "dof": 3, "force": -spec["gravity"]}
        return {"name": "column", "kind": "opensees", "config": {**model, "force_control": [axial]}}
    model["control"].append({"name": "z", "node": 2, "dof": 3})
    sample = dt / LAB_SAMPLES
    site = {"dt": sample, "setup": {"kind": "none", "dofs": ["x", "y", "z"]},
            "force_control": [{"dof": "z", "force": -spec["gravity"], "stiffness": AXIAL_STIFFNESS,
                               "tolerance": 1e-3}],
            "backend": {"plant": {"dt": sample, "dofs": ["a1", "a2", "a3"], "actuators": [{"model": "ideal"}] * 3,
                                  "specimen": {"kind": "opensees", **model}}}}
    return {"name": "column", "kind": "experimental", "config": site}


def one_model(case: str, dt: float, gravity: float | None = None) -> np.ndarray:
    """The same column, mass, damping and records in one OpenSees model (rows x [x, y], m); ``gravity``: another
    gravity load than the case's (N)."""
    import openseespy.opensees as ops

    from hybridsim.coordinator.problems.column.model import build

    spec, record = CASES[case.removeprefix(LAB)], records()
    ops.wipe()
    build(ops, section=spec["section"], top_mass=MASS, gravity=spec["gravity"] if gravity is None else gravity)
    ops.rayleigh(RAYLEIGH_A, 0.0, 0.0, 0.0)
    ops.timeSeries("Path", 1, "-dt", RECORD_DT, "-values", *(spec["scale"] * record))
    ops.timeSeries("Path", 2, "-dt", RECORD_DT, "-values",
                   *np.r_[np.zeros(round(START_Y / RECORD_DT)), SCALE_Y * spec["scale"] * record])
    ops.pattern("UniformExcitation", 1, 1, "-accel", 1)
    ops.pattern("UniformExcitation", 2, 2, "-accel", 2)
    ops.constraints("Plain")
    ops.numberer("RCM")
    ops.system("BandGeneral")
    ops.test("NormDispIncr", 1e-12, 50)
    ops.algorithm("Newton")
    ops.integrator("Newmark", 0.5, 0.25)
    ops.analysis("Transient")
    steps = round(DURATION / dt)
    out = np.zeros((steps + 1, 2))
    for n in range(1, steps + 1):
        if ops.analyze(1, dt) != 0:
            raise RuntimeError(f"the one OpenSees model did not converge at step {n}")
        out[n] = [ops.nodeDisp(2, 1), ops.nodeDisp(2, 2)]
    ops.wipe()
    return out


def max_rel_diff(case: str, dt: float, folder: Path) -> dict[str, float]:
    """The hybrid against the one model: max |difference| over the larger peak, and the peaks (m)."""
    reference = one_model(case, dt)
    response = hybrid(folder, case, dt)
    peak = float(np.max(np.abs(reference)))
    return {f"max_rel_diff_dt_{dt:g}": float(np.max(np.abs(response - reference)) / peak),
            f"peak_x_dt_{dt:g}": float(np.max(np.abs(reference[:, 0]))),
            f"peak_y_dt_{dt:g}": float(np.max(np.abs(reference[:, 1])))}


def gravity_effect(case: str, dt: float) -> float:
    """How much the held gravity load changes the one model's response: max |difference| over the peak."""
    with_gravity, without = one_model(case, dt), one_model(case, dt, gravity=0.0)
    return float(np.max(np.abs(without - with_gravity)) / np.max(np.abs(with_gravity)))
