"""`hybridsim report` of runs that stopped early: interrupted, aborted, stopped by a site limit, a site that died.

Each run is real (a linear spring in process or a real site daemon on loopback); each report is opened in
headless Chromium, which must show the plots of the steps that completed and, at the top of the page, why
and where the run stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.monitor.report import write_report
from hybridsim.coordinator.recorder import read_attributes, read_results
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.wire.daemons import LocalDaemon
from tests.conftest import EXAMPLES, MARTHS_DATA
from tests.coordinator.monitor.browser import chromium, console_errors, require_chromium

K = 39478.4  # N/m: 1 Hz with 1000 kg
SPRING = {"dofs": ["x"], "stiffness": [[K]]}


def spring_run(tmp_path, name: str, config: dict | None = None, **module) -> object:
    """The 1 Hz oscillator under El Centro x 0.4 for 10 s, its spring as given."""
    return parse_experiment({
        "experiment": {"name": name, "dt": 0.01, "duration": 10.0},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0]},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 0.4},
        "modules": [{"name": "spring", "kind": "linear", "config": config or SPRING, **module}],
        "output": {"file": str(tmp_path / f"{name}.h5")},
    }, base_dir=tmp_path)


def at_step(n: int, action):
    """A step listener that does ``action()`` once step ``n`` has completed."""
    def listener(step: int, arrays) -> None:
        if step == n:
            action()
    return listener


def interrupt() -> None:
    raise KeyboardInterrupt


@pytest.fixture(scope="module")
def stopped_reports(tmp_path_factory):
    """Four runs that stop early, their results files and reports: {case: (results, stored, report)}."""
    tmp_path = tmp_path_factory.mktemp("stopped")
    out = {}
    with pytest.raises(KeyboardInterrupt):
        run_experiment(spring_run(tmp_path, "interrupted"), listeners=[at_step(300, interrupt)])
    control = RunControl()
    with pytest.raises(RunStopped, match="aborted by the test's operator after step 400"):
        run_experiment(spring_run(tmp_path, "aborted"), control=control,
                       listeners=[at_step(400, lambda: control.abort("aborted by the test's operator"))])
    limited = dict(SPRING, limits={"displacement": 0.002})
    with pytest.raises(RunStopped, match="displacement limit"):
        run_experiment(spring_run(tmp_path, "limited", limited))
    with LocalDaemon("linear", SPRING, name="doomed") as daemon:
        address = daemon.start()
        experiment = spring_run(tmp_path, "site_failed", address=address, deadline_s=2.0)
        with pytest.raises(RunStopped, match=r"module 'spring' \(daemon at 127\.0\.0\.1:\d+\) at step \d+ "):
            run_experiment(experiment, listeners=[at_step(250, lambda: os.kill(daemon.pid, signal.SIGKILL))])
    for case in ("interrupted", "aborted", "limited", "site_failed"):
        results = tmp_path / f"{case}.h5"
        out[case] = (results, read_results(results), write_report(results))
    return out


def test_every_stopped_run_keeps_its_steps_and_records_why_and_where_it_stopped(stopped_reports):
    rows = {case: stored["attrs"]["completed_steps"] for case, (_, stored, _) in stopped_reports.items()}
    assert rows["interrupted"] == 301 and rows["aborted"] == 401 and rows["site_failed"] == 251
    # the limit: |x| first beyond 2 mm where the unstopped oscillator passes it (alpha-OS predicts d close to d)
    limited = stopped_reports["limited"][1]
    x = limited["displacement"][:, 0]
    assert np.max(np.abs(x)) <= 0.002 and np.max(np.abs(x)) > 0.0015

    stops = {case: json.loads(stored["attrs"]["stop"]) for case, (_, stored, _) in stopped_reports.items()}
    assert stops["interrupted"] == {"reason": "interrupted", "step": 301, "time_s": pytest.approx(3.01),
                                    "signal": "SIGINT"}  # the step that did not complete (issue 29 item 4)
    summaries = {case: json.loads(stored["attrs"]["summary"]) for case, (_, stored, _) in stopped_reports.items()}
    assert {case: summary["steps"] for case, summary in summaries.items()} == {
        case: count - 1 for case, count in rows.items()}
    assert stops["aborted"]["step"] == 401 and stops["aborted"]["time_s"] == pytest.approx(4.01)
    assert stops["limited"]["module"] == "spring" and stops["limited"]["step"] == rows["limited"]
    assert "displacement limit on DOF 'x'" in stops["limited"]["cause"]
    assert stops["site_failed"]["module"] == "spring" and stops["site_failed"]["step"] == 251


def test_the_report_of_every_stopped_run_opens_in_a_browser_with_the_reason_at_the_top(stopped_reports, tmp_path):
    require_chromium()
    expected = {"interrupted": ("interrupted", "300 of 1000"),
                "aborted": ("aborted by the test's operator", "step 401 (t = 4.01 s)"),
                "limited": ("displacement limit on DOF 'x'", "module\nspring"),
                "site_failed": ("site spring at 127.0.0.1:", "step 251 (t = 2.51 s)")}
    with chromium() as page:
        for case, (results, stored, report) in stopped_reports.items():
            page.get(report.as_uri())
            banner = page.find_element("id", "report-stop")
            text = banner.text.replace("\n", " ")
            for phrase in expected[case]:
                assert phrase.replace("\n", " ") in text, (case, text)
            # the banner sits above the plots
            plots = page.find_element("id", "plots")
            assert banner.location["y"] < plots.location["y"]
            assert page.find_element("id", "state").text == "STOPPED"
            last = stored["attrs"]["completed_steps"] - 1
            assert page.find_element("id", "step").text == str(last)
            assert len(page.find_elements("css selector", "#plots .uplot")) >= 2
            assert console_errors(page) == []
            page.save_screenshot(str(tmp_path / f"report_{case}.png"))


def test_hybridsim_report_of_a_stopped_run_exits_0(stopped_reports, tmp_path):
    results = stopped_reports["aborted"][0]
    done = subprocess.run([sys.executable, "-m", "hybridsim", "report", str(results), "--out", str(tmp_path / "r.html")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "aborted by the test" in (tmp_path / "r.html").read_text()


def test_plots_of_all_zero_data_have_a_small_symmetric_axis_and_titles_that_say_what_is_plotted(tmp_path):
    """No ground motion: every displacement and force is zero; the axes must not span 0..100."""
    require_chromium()
    experiment = spring_run(tmp_path, "at_rest")
    table = dict(experiment.table, ground_motion={**experiment.table["ground_motion"], "scale": 0.0})
    run_experiment(parse_experiment(table, base_dir=tmp_path))
    with chromium() as page:
        page.get(write_report(tmp_path / "at_rest.h5").as_uri())
        ranges = {name: (low, high) for name, low, high in page.execute_script("return hybridsimMonitor.yRanges()")}
        titles = [h.text for h in page.find_elements("css selector", "#plots h2")]
    response = "Response: displacement of x"
    assert response in titles and "spring: target (dashed) and measured displacement of x" in titles
    for name in (response, "spring: target (dashed) and measured displacement of x",
                 "Interface forces: restoring force each module measured"):
        assert ranges[name] == pytest.approx((-1e-3, 1e-3)), name


def test_the_report_of_a_run_whose_coordinator_was_killed_says_it_did_not_finish(tmp_path):
    """kill -9 of `hybridsim run` mid-run: the file stays marked running; the report shows the rows it holds."""
    results = tmp_path / "killed.h5"
    run = subprocess.Popen([sys.executable, "-m", "hybridsim", "run", str(EXAMPLES / "monitor_shear_building.toml"),
                            "--realtime", "--quiet", "--output", str(results)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (results.exists() and _rows(results) >= 1024):
            time.sleep(0.2)
    finally:
        run.kill()
        run.wait(10)
    rows = _rows(results)
    assert rows >= 1024  # one block of rows reached the file before the kill
    page = write_report(results).read_text()
    assert "Run not finished: the file is still marked running" in page
    assert f"{rows - 1} of " in page and "the file holds every step up to it" in page


def _rows(results) -> int:
    try:
        return int(read_attributes(results)["completed_steps"])
    except (OSError, KeyError):
        return 0
