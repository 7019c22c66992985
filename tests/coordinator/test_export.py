"""`hybridsim export`: the .mat read back with scipy.io and the CSVs read back equal the results file, units included."""

from __future__ import annotations

import csv
import dataclasses
import json
import subprocess
import sys

import h5py
import numpy as np
import pytest
import scipy.io

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.recorder import annotate, read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES

J = {"J1": [0.0, 0.0], "J2": [3.18, 1.75], "J7": [9.69, 7.72]}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """The shear building (five linear story modules) for 5 s, with a J table as an evaluation stores it."""
    tmp = tmp_path_factory.mktemp("export")
    experiment = load_experiment(EXAMPLES / "shear_building.toml")
    steps = round(5.0 / experiment.dt)

    motion = dataclasses.replace(experiment.motion, acceleration=experiment.motion.acceleration[: steps + 1])
    run_experiment(dataclasses.replace(experiment, motion=motion), output=tmp / "building.h5")
    annotate(tmp / "building.h5", "J", J)
    return tmp / "building.h5"


def hybridsim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hybridsim", *args], capture_output=True, text=True, timeout=120)


def test_every_dataset_and_module_group_carries_units_and_dofs(results):
    with h5py.File(results) as f:
        assert list(f["displacement"].attrs["units"]) == ["m"] * 5
        assert list(f["velocity"].attrs["units"]) == ["m/s"] * 5
        assert list(f["restoring_force"].attrs["dofs"]) == ["x1", "x2", "x3", "x4", "x5"]
        assert f["time"].attrs["units"] == "s" and f["ground_acceleration"].attrs["units"] == "m/s^2"
        assert list(f["modules/story3"].attrs["dofs"]) == ["x2", "x3"]
        assert f["modules/story3"].attrs["kind"] == "linear" and f["modules/story3"].attrs["where"] == "in process"
        assert list(f["modules/story3/force"].attrs["units"]) == ["N", "N"]
        assert list(f["model/initial_stiffness"].attrs["units"]) == ["N/m"] * 5


def test_the_mat_file_round_trips_through_scipy_io(results, tmp_path):
    done = hybridsim("export", str(results), "--to", "mat", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    mat = scipy.io.loadmat(tmp_path / "building.mat", simplify_cells=True)
    stored = read_results(results)
    np.testing.assert_array_equal(mat["displacement"], stored["displacement"])
    np.testing.assert_array_equal(mat["modules_story3_force"], stored["modules/story3/force"])
    assert list(mat["units"]["velocity"]) == ["m/s"] * 5
    assert list(mat["columns"]["modules_story3_displacement"]) == ["x2", "x3"]
    assert mat["status"] == "completed"
    assert json.loads(mat["summary"])["steps"] == stored["displacement"].shape[0] - 1
    np.testing.assert_array_equal(mat["J"]["J2"], [3.18, 1.75])
    assert 'name = "shear_building"' in mat["experiment"]
    raw = scipy.io.loadmat(tmp_path / "building.mat")  # as MATLAB sees it: a step per row in every dataset
    rows = stored["displacement"].shape[0]
    assert (raw["time"].shape, raw["wall_step_s"].shape, raw["displacement"].shape) == ((rows, 1), (rows, 1), (rows, 5))


def test_the_csv_files_read_back_with_their_units(results, tmp_path):
    done = hybridsim("export", str(results), "--to", "csv", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    stored = read_results(results)
    with open(tmp_path / "building.response.csv") as f:
        header = next(csv.reader(f))
    table = np.loadtxt(tmp_path / "building.response.csv", delimiter=",", skiprows=1)
    assert header[0] == "time [s]" and header[1] == "ground_acceleration [m/s^2]"
    column = header.index("velocity:x4 [m/s]")
    np.testing.assert_array_equal(table[:, column], stored["velocity"][:, 3])  # %.17g: exact
    np.testing.assert_array_equal(table[:, header.index("restoring_force:x1 [N]")], stored["restoring_force"][:, 0])
    with open(tmp_path / "building.module.story5.csv") as f:
        assert next(csv.reader(f)) == ["time [s]", "displacement:x4 [m]", "displacement:x5 [m]", "force:x4 [N]",
                                       "force:x5 [N]"]
    module = np.loadtxt(tmp_path / "building.module.story5.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(module[:, 3:], stored["modules/story5/force"])
    run = json.loads((tmp_path / "building.run.json").read_text())
    assert run["status"] == "completed" and run["J"] == J and run["units"]["acceleration"] == ["m/s^2"] * 5


def test_a_file_that_is_not_a_results_file_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "not.h5").write_text("no")
    done = hybridsim("export", str(tmp_path / "not.h5"), "--to", "csv")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a hybridsim results file" in done.stderr


@pytest.mark.parametrize("command", ["export", "report"])
def test_a_results_file_that_is_not_there_is_not_found(tmp_path, command):
    missing = tmp_path / "missing.h5"
    done = hybridsim(command, str(missing), *(["--to", "csv"] if command == "export" else []))
    assert (done.returncode, done.stderr) == (2, f"hybridsim {command}: error: {missing}: no such file (give the results "
                                                 "file of a run, e.g. results/NAME.h5)\n")
