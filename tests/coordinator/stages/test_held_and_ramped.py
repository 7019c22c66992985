"""What one stage leaves to the next, against OpenSees' own staged analysis of two Steel01 springs in series
(node 1 fixed - A - node 2 (x1) - B - node 3 (x2)): a static displacement ramps from where the stage before left
the structure (``DisplacementControl`` after ``loadConst``), and a quasi-static force history's last value is held
in the later stages (``loadConst`` after its pattern); B yields, so the path matters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openseespy.opensees as ops
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_checkpoint
from hybridsim.coordinator.simulation import resume_run, run_experiment
from tests.coordinator.test_resume import aborted_at

MODELS = Path(__file__).parents[2] / "modules" / "opensees" / "models"
SPRINGS = {"case": "series", "fy": 100.0, "e0": 1000.0, "b": 0.1, "fy_b": 10.0, "e0_b": 100.0}
"""N, N/m: A stays elastic under the 80 N held at x1 plus B's force (at most about 15 N here); B yields at 0.1 m"""
HELD = 80.0
"""N at x1"""
LADDER = [0.2, 0.35, 0.5, 0.3, 0.0, -0.2, -0.35, -0.1, 0.15]
"""m at x2, the quasi-static stage's targets"""


def series(tmp_path: Path, name: str, stages: list, checkpoint_every: int = 0) -> dict:
    config = {"model": "springs.py", "parameters": SPRINGS,
              "control": [{"name": "x1", "node": 2, "dof": 1}, {"name": "x2", "node": 3, "dof": 1}]}
    return {"experiment": {"name": name, "dt": 0.01},
            "structure": {"dofs": ["x1", "x2"], "mass_diagonal": [1.0, 1.0]}, "stages": stages,
            "modules": [{"name": "springs", "kind": "opensees", "config": config}],
            "output": {"file": str(tmp_path / f"{name}.h5"), "checkpoint_every": checkpoint_every}}


def opensees_staged(forces: list[float], targets: list[float]) -> np.ndarray:
    """OpenSees alone: ``LoadControl`` of a pattern at x1 through ``forces`` (N), ``loadConst``, then
    ``DisplacementControl`` of x2 through ``targets`` (m) from where it is; (x1, x2) after each step (m)."""
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    from tests.modules.opensees.models.springs import build

    build(ops, **SPRINGS)
    ops.timeSeries("Linear", 1)
    ops.pattern("Plain", 1, 1)
    ops.load(2, forces[0])
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    ops.test("NormDispIncr", 1e-15, 100)
    ops.algorithm("Newton")
    rows = []
    for factor in np.array(forces) / forces[0]:
        ops.integrator("LoadControl", factor - ops.getTime())
        ops.analysis("Static")
        assert ops.analyze(1) == 0
        rows.append([ops.nodeDisp(2, 1), ops.nodeDisp(3, 1)])
    ops.loadConst("-time", 0.0)
    ops.timeSeries("Linear", 2)
    ops.pattern("Plain", 2, 2)
    ops.load(3, 1.0)
    for target in targets:
        ops.integrator("DisplacementControl", 3, 1, target - ops.nodeDisp(3, 1))
        assert ops.analyze(1) == 0
        rows.append([ops.nodeDisp(2, 1), ops.nodeDisp(3, 1)])
    ops.wipe()
    return np.array(rows)


def max_rel_diff(hybrid: np.ndarray, reference: np.ndarray) -> float:
    return float(np.abs(hybrid - reference).max() / np.abs(reference).max())


STATIC = [{"kind": "static", "name": "push", "forces": {"x1": HELD}, "increments": 4, "tolerance": 1e-14},
          {"kind": "static", "name": "pull", "displacements": {"x2": 0.5}, "increments": 10, "tolerance": 1e-14,
           "max_iterations": 200}]


def test_a_static_displacement_ramps_from_where_the_stage_before_left_and_resumes_bit_for_bit(tmp_path):
    whole = run_experiment(parse_experiment(series(tmp_path, "whole", STATIC), base_dir=MODELS))
    start = HELD / SPRINGS["e0"]  # x2 follows x1 (B unloaded) to 80 N / 1000 N/m
    reference = opensees_staged([20.0, 40.0, 60.0, 80.0], list(start + (0.5 - start) * np.arange(1, 11) / 10))
    figure = max_rel_diff(whole.displacement[1:], reference)
    print(f"static force stage then static displacement stage vs OpenSees LoadControl, loadConst, "
          f"DisplacementControl: max_rel_diff {figure:.2e}")
    assert figure < 1e-10
    assert whole.displacement[5, 1] == pytest.approx(start + 0.1 * (0.5 - start), rel=1e-12)  # no jump back to 0
    control, listener = aborted_at(8)
    with pytest.raises(RunStopped):
        run_experiment(parse_experiment(series(tmp_path, "broken", STATIC, 6), base_dir=MODELS), control=control,
                       listeners=[listener])
    assert read_checkpoint(tmp_path / "broken.h5").step == 6  # inside the displacement stage (rows 5-14)
    resumed = resume_run(tmp_path / "broken.h5")
    np.testing.assert_array_equal(resumed.displacement, whole.displacement)


def test_a_quasi_static_force_histories_last_value_is_held_in_the_later_stages(tmp_path):
    stages = [{"kind": "quasi-static", "name": "gravity", "dof": "x1", "control": "force",
               "values": [40.0, HELD], "tolerance": 1e-14},
              {"kind": "quasi-static", "name": "ladder", "dof": "x2", "values": LADDER, "tolerance": 1e-14,
               "max_iterations": 200}]
    result = run_experiment(parse_experiment(series(tmp_path, "held", stages), base_dir=MODELS))
    reference = opensees_staged([40.0, HELD], LADDER)
    figure = max_rel_diff(result.displacement[1:], reference)
    print(f"quasi-static force history then a displacement ladder vs OpenSees loadConst: max_rel_diff {figure:.2e}")
    assert figure < 1e-10
    force_b = result.restoring_force[3:, 1]  # B's force, the reaction at x2
    assert np.abs(force_b).max() > SPRINGS["fy_b"]  # B yields
    # x1 carries the held 80 N plus B's pull: A (elastic) at x1 = (80 + F_B) / e0
    np.testing.assert_allclose(result.displacement[3:, 0], (HELD + force_b) / SPRINGS["e0"], rtol=1e-9)
