"""A DOF has one kind: modules that share it must describe it alike (m or rad in the results file)."""

from __future__ import annotations

from pathlib import Path

import h5py
import pytest

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import MARTHS_DATA


def _experiment(tmp_path: Path, right_kinds: list[str] | None) -> dict:
    right = {"dofs": ["x", "theta"], "stiffness": [[2.0e6, 0.0], [0.0, 3.0e5]]}
    if right_kinds is not None:
        right["kinds"] = right_kinds
    return {
        "experiment": {"name": "kinds", "dt": 0.01, "duration": 0.05},
        "structure": {"dofs": ["x", "theta"], "mass_diagonal": [1.0e3, 10.0], "influence": [1.0, 0.0]},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 0.4},
        "integrator": {"kind": "alpha-os"},
        "modules": [
            {"name": "left", "kind": "linear",
             "config": {"dofs": ["x", "theta"], "stiffness": [[1.0e6, 0.0], [0.0, 2.0e5]],
                        "kinds": ["translation", "rotation"]}},
            {"name": "right", "kind": "linear", "config": right},
        ],
        "output": {"file": str(tmp_path / "kinds.h5")},
    }


def test_a_dof_described_as_translation_by_one_module_and_rotation_by_another_is_refused(tmp_path: Path) -> None:
    experiment = parse_experiment(_experiment(tmp_path, None), base_dir=tmp_path)
    with pytest.raises(UsageError, match=r"DOF 'theta' is a rotation in module 'left' but a translation in "
                                         r"module 'right'.*'kinds'"):
        run_experiment(experiment)
    assert not (tmp_path / "kinds.h5").exists()


def test_modules_that_agree_record_the_rotation_in_radians(tmp_path: Path) -> None:
    experiment = parse_experiment(_experiment(tmp_path, ["translation", "rotation"]), base_dir=tmp_path)
    run_experiment(experiment)
    with h5py.File(tmp_path / "kinds.h5", "r") as f:
        assert [str(u) for u in f["displacement"].attrs["units"]] == ["m", "rad"]
        assert [str(u) for u in f["modules/right/displacement"].attrs["units"]] == ["m", "rad"]
