"""`hybridsim resume` compares what it resumes with what the run began with (a module's config, the files the run
names, by SHA-256) and refuses a change in one line unless --accept-changed names it (recorded in the file)."""

from __future__ import annotations

import json
import shutil

import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_attributes
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import MARTHS_DATA
from tests.coordinator.test_resume import aborted_at

COLUMN = 'dofs = ["x"]\nlaw = "bilinear"\nstiffness = {k}\nyield_displacement = 0.004\nhardening_ratio = 0.05\n'


def stopped_run(tmp_path) -> str:
    """A yielding column read from column.toml, under a copy of El Centro, stopped after step 450 (checkpoint
    at step 400)."""
    (tmp_path / "column.toml").write_text(COLUMN.format(k=4.0e5))
    shutil.copy(MARTHS_DATA / "ground_motion_elcentro.csv", tmp_path / "motion.csv")
    table = {
        "experiment": {"name": "edited", "dt": 0.005, "duration": 3.0},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0]},
        "ground_motion": {"file": "motion.csv", "scale": 0.6},
        "integrator": {"kind": "alpha-os", "alpha": -0.1},
        "modules": [{"name": "column", "kind": "spring", "config_file": "column.toml"}],
        "output": {"file": str(tmp_path / "edited.h5"), "checkpoint_every": 200},
    }
    control, listener = aborted_at(450)
    with pytest.raises(RunStopped):
        run_experiment(parse_experiment(table, base_dir=tmp_path), control=control, listeners=[listener])
    return str(tmp_path / "edited.h5")


def test_an_edited_config_file_is_refused_unless_accepted_and_the_acceptance_is_recorded(tmp_path, capsys):
    results = stopped_run(tmp_path)
    (tmp_path / "column.toml").write_text(COLUMN.format(k=4.4e5))  # a 10 % stiffer column between stop and resume
    assert main(["resume", results, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "modules.column.config changed since the run began" in err and "--accept-changed modules.column.config" in err
    with open(tmp_path / "motion.csv", "a") as f:  # the ground motion's file changed too (a trailing comment)
        f.write("# edited\n")
    assert main(["resume", results, "--quiet", "--accept-changed", "modules.column.config"]) == 2
    assert "ground_motion.file changed since the run began" in capsys.readouterr().err
    assert main(["resume", results, "--quiet", "--accept-changed", "nothing.changed", "--accept-changed",
                 "modules.column.config", "--accept-changed", "ground_motion.file"]) == 2
    assert "--accept-changed nothing.changed: that input has not changed" in capsys.readouterr().err
    assert read_attributes(results)["status"] != "completed"  # every refusal left the file as it was
    assert main(["resume", results, "--json", "--accept-changed", "modules.column.config",
                 "--accept-changed", "ground_motion.file"]) == 0
    attrs = read_attributes(results)
    assert attrs["status"] == "completed"
    accepted = json.loads(attrs["accepted_changes"])
    assert [(a["key"], a["resumed_from_step"]) for a in accepted] == [("ground_motion.file", 400),
                                                                     ("modules.column.config", 400)]
    assert all(a["before"] != a["after"] for a in accepted)
    assert json.loads(attrs["inputs"])["modules.column.config"] == accepted[1]["after"]
