"""The report and the monitor in the lab's names: the tutorial's frame (docs/tutorial.md), whose modules name their
DOFs only in their own configurations (an experimental site's `setup.dof`, an OpenSees site's `[[control]]`
names), shows named targets, the site's tracking error and synchronization subspace, and the hysteresis of
every module DOF; the site's records end without an unwritten row.
"""

from __future__ import annotations

import json
import re
import tomllib

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.export import export_results
from hybridsim.coordinator.monitor.report import write_report
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.v1 import monitor_pb2 as pb
from tests.coordinator.monitor.browser import chromium, console_errors, require_chromium
from tests.coordinator.monitor.runs import monitored_run
from tests.coordinator.monitor.test_page import _until
from tests.docs.tutorial import tutorial_files

DURATION_S = 8.0
"""of El Centro: the storey yields (at 8 mm) from about 6.5 s on"""


def frame_experiment(folder, duration_s: float = DURATION_S):
    """The tutorial's frame with its OpenSees storey in process (the same files; no daemon to start)."""
    tutorial_files(folder)
    table = tomllib.loads((folder / "frame.toml").read_text())
    upper = next(m for m in table["modules"] if m["name"] == "upper")
    del upper["address"]
    upper["config_file"] = "upper.toml"
    table["experiment"]["duration"] = duration_s
    assert all("dofs" not in tomllib.loads((folder / f"{name}.toml").read_text()) for name in ("lab", "upper"))
    return parse_experiment(table, base_dir=folder)


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    folder = tmp_path_factory.mktemp("frame")
    results = folder / "frame.h5"
    run_experiment(frame_experiment(folder), output=results)
    return results, write_report(results)


def payload(report) -> dict:
    text = report.read_text()
    return json.loads(re.search(r'<script type="application/json" id="run-data">(.*?)</script>', text, re.S).group(1))


def test_the_report_names_each_module_dof_as_the_module_describes_itself(frame) -> None:
    results, report = frame
    data = payload(report)
    modules = {m["name"]: m for m in data["info"]["modules"]}
    assert (modules["lab"]["dofs"], modules["lab"]["kind"], modules["lab"]["has_command"],
            modules["lab"]["actuated"]) == (["floor1"], "experimental", True, True)
    assert (modules["upper"]["dofs"], modules["upper"]["kind"], modules["upper"]["has_command"],
            modules["upper"]["actuated"]) == (["floor1", "floor2"], "opensees", True, False)
    assert data["info"]["realtime"] is False
    with h5py.File(results) as f:
        structure, lab = f["displacement"][()], f["modules/lab/displacement"][()]
    steps = np.concatenate([frame["step"] for frame in data["frames"]])
    command = np.concatenate([frame["command"][0] for frame in data["frames"]])  # lab's floor1: the first column
    measured = np.concatenate([frame["measured"][0] for frame in data["frames"]])
    assert np.array_equal(command, structure[steps, 0]) and np.array_equal(measured, lab[steps, 0])
    assert 0 < np.max(np.abs(measured - command)) < 0.05 * np.max(np.abs(command))  # the actuator lags a little


def test_the_site_records_end_with_the_held_command_not_an_unwritten_row(frame, tmp_path) -> None:
    results, _ = frame
    with h5py.File(results) as f:
        records = {k: f[f"modules/lab/records/{k}"][()] for k in ("target_strokes", "commands", "measured_strokes")}
    samples = round(DURATION_S / 0.001) + 1
    assert all(v.shape == (samples, 1) and np.isfinite(v).all() for v in records.values())
    for key in ("target_strokes", "commands"):  # no command follows the last sample: the actuator holds one
        assert records[key][-1, 0] == records[key][-2, 0]
    export_results(results, "csv", tmp_path / "csv")
    exported = "".join(p.read_text() for p in (tmp_path / "csv").rglob("*.csv"))
    assert "nan" not in exported.lower()


def test_the_report_page_shows_hysteresis_tracking_and_synchronization(frame) -> None:
    require_chromium()
    results, report = frame
    with h5py.File(results) as f:
        force = f["modules/lab/force"][:, 0]
        error_mm = 1e3 * (f["modules/lab/displacement"][:, 0] - f["displacement"][:, 0])
    with chromium(1400, 2400) as page:
        page.get(report.as_uri())
        _until(lambda: page.execute_script("return hybridsimMonitor.redraws()") > 0, what="the first drawing")
        titles = [e.text for e in page.find_elements("css selector", "#plots h2")]
        notes = " ".join(e.text for e in page.find_elements("css selector", "#plots .note"))
        ranges = {name: (low, high) for name, low, high in page.execute_script("return hybridsimMonitor.yRanges()")}
        late_class = page.find_element("id", "late").get_attribute("class")
        late_note = page.find_element("id", "late-note").text
        assert console_errors(page) == []
    assert {"lab: target (dashed) and measured displacement of floor1", "lab: hysteresis of floor1",
            "upper: hysteresis of floor1", "upper: hysteresis of floor2", "Synchronization subspace",
            "Tracking error: measured - target displacement (mm, mrad)"} <= set(titles)
    assert "unknown" not in notes and "no site with actuators" not in notes
    low, high = ranges["hysteresis lab floor1"]  # the y axis holds the force loop, padded by at most a tenth
    span = force.max() - force.min()
    assert low <= force.min() and high >= force.max() and high - low <= 1.5 * span
    low, high = ranges["Tracking error: measured - target displacement (mm, mrad)"]
    assert low <= error_mm.min() and high >= error_mm.max() and high - low <= 1.5 * np.ptp(error_mm)
    assert late_class == "" and "not paced" in late_note  # steps over dt are no alarm in a run not paced


def test_the_live_monitor_names_them_too(tmp_path) -> None:
    experiment = frame_experiment(tmp_path, duration_s=2.0)
    with monitored_run(experiment, tmp_path / "live.h5") as run:
        info = next(iter(run.stub().Watch(pb.WatchRequest(), timeout=60))).info
    modules = {m.name: m for m in info.modules}
    assert (list(modules["lab"].dofs), modules["lab"].kind, modules["lab"].has_command, modules["lab"].actuated) \
        == (["floor1"], "experimental", True, True)
    assert (list(modules["upper"].dofs), modules["upper"].has_command, modules["upper"].actuated) \
        == (["floor1", "floor2"], True, False)
