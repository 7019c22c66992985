"""A module's own records travel to the coordinator and land in the results file, never in a config folder.

The maRTHS main job (examples/marths.toml, every module a local daemon) over its first 6 s: the experimental
site's per-sample targets, commands and measured strokes come back over the wire (the Records call) into
/modules/lab/records/, with units and column names; the example's folder is left exactly as it was.  The
measured strokes are checked against what the site reported each step: the coupler's kinematics map them
onto the interface displacements in /modules/lab/displacement.
"""

from __future__ import annotations

import dataclasses
import json

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.export import export_results
from hybridsim.coordinator.monitor.report import write_report
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.coordinator.problems.marths import parts
from hybridsim.modules.experimental.kinematics import Coupler
from tests.conftest import EXAMPLES

DURATION = 6.0  # s


def folder_state(folder):
    return {p.relative_to(folder): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))
            if "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("records")
    before = folder_state(EXAMPLES / "marths")
    experiment = load_experiment(EXAMPLES / "marths.toml")
    steps = round(DURATION / experiment.dt)
    motion = dataclasses.replace(experiment.motion, acceleration=experiment.motion.acceleration[: steps + 1])
    result = run_experiment(dataclasses.replace(experiment, motion=motion), output=tmp / "marths.h5")
    return result, before, tmp


def test_the_results_file_holds_the_sites_per_sample_records_and_the_config_folder_is_untouched(run):
    result, before, _ = run
    assert folder_state(EXAMPLES / "marths") == before
    assert not list(EXAMPLES.rglob("*.h5"))
    steps = result.displacement.shape[0]
    with h5py.File(result.output) as f:
        records = f["modules/lab/records"]
        assert sorted(records) == ["commands", "compensator_1", "compensator_2", "compensator_parameters",
                                   "measured_strokes", "plant", "sample_time", "target_strokes"]
        # the plant daemon's DAQ log came through the site: the commands it held are the site's (mm), and
        # their volts are the DAQ's conversion (maRTHS SPEC 9)
        commands = records["commands"][: steps - 1]
        np.testing.assert_allclose(records["plant/commands"][()], commands, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(records["plant/volts"][()], parts.daq().volts(commands), rtol=1e-12)
        assert list(records["plant/volts"].attrs["units"]) == ["V", "V"]
        measured = records["measured_strokes"][()]
        assert measured.shape == (steps, 2)  # one control sample per step (dt = 1/1024 s), t = 0 included
        assert list(records["measured_strokes"].attrs["units"]) == ["mm", "mm"]
        assert list(records["commands"].attrs["columns"]) == ["actuator_1", "actuator_2"]
        np.testing.assert_allclose(records["sample_time"][:, 0], result.time, rtol=0, atol=1e-12)
        assert records["compensator_1/parameters"].shape == (1, 4)  # the RLS-AC's four adapted taps
        per_sample = records["compensator_parameters"]  # both RLS-AC's taps at every sample, the last held
        assert per_sample.shape == (steps, 8) and list(per_sample.attrs["columns"])[4] == "actuator_2/p0"
        assert np.array_equal(per_sample[-1], np.concatenate([records[f"compensator_{i}/parameters"][0]
                                                              for i in (1, 2)]))
        interface = f["modules/lab/displacement"][()]
        site = json.loads((EXAMPLES / "marths" / "site.json").read_text())
    # the strokes the site measured at sample k are the interface displacements it reported at step k
    coupler = Coupler.from_attachments(site["coupler"]["offset"], tuple(site["coupler"]["heights"]),
                                       tuple(site["coupler"]["angles_deg"]))
    x, theta = coupler.frame(measured[:, 0] / 1000.0, measured[:, 1] / 1000.0)
    np.testing.assert_allclose(x, interface[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(-np.asarray(theta), interface[:, 1], rtol=0, atol=1e-12)
    assert np.max(np.abs(measured)) > 0.1  # mm: the actuators moved
    # the evaluation reads them from the results file (its magnitudes over 12 s: tests/.../marths/test_hybrid.py)
    assert set(result.summary["evaluation"]["J"]) == {f"J{i}" for i in range(1, 11)}


def test_the_report_lists_the_records(run):
    result, _, tmp = run
    page = write_report(result.output, tmp / "marths.html").read_text()
    steps = result.displacement.shape[0]
    assert "<td>lab</td><td>measured_strokes</td><td>%d x 2</td>" % steps in page
    assert "configuration as the site gives it" in page


def test_the_records_export_with_their_units(run):
    result, _, tmp = run
    written = export_results(result.output, "csv", tmp / "csv")
    names = {p.name for p in written}
    assert "marths.module.lab.measured_strokes.csv" in names
    header = (tmp / "csv" / "marths.module.lab.measured_strokes.csv").read_text().splitlines()[0]
    assert header == "measured_strokes:actuator_1 [mm],measured_strokes:actuator_2 [mm]"
