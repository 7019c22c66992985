"""End to end in headless Chromium: `hybridsim run --monitor` and `hybridsim monitor` as processes, the page driven.

Set HYBRIDSIM_SCREENSHOTS=docs to write the page's screenshots there (docs/monitor_*.png).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.monitor.report import write_report
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES, MARTHS_DATA, ROOT
from tests.coordinator.monitor.browser import chromium, console_errors, require_chromium
from tests.coordinator.monitor.runs import TOKEN, example

pytestmark = pytest.mark.timeout(240)


def _hybridsim(args: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hybridsim", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=log.open("w"))


def _printed(log: Path, pattern: str, timeout_s: float = 60.0) -> re.Match:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text())
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{log.name} never printed {pattern!r}:\n{log.read_text()}")


WAIT_S = 60.0
"""the bound on every wait for the page to show something: each is an event, not a speed (at load 14-18 the
held state took more than 10 s to reach the page through the coordinator, the monitor process and Chromium)"""


def _until(condition: Callable[[], object], timeout_s: float = WAIT_S, what: str | Callable[[], str] = "") -> None:
    """Wait for ``condition``; ``what`` names it in the failure (a callable: read then, e.g. the page's state)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")
        time.sleep(0.05)


def _shots(tmp_path: Path) -> Path:
    return Path(os.environ.get("HYBRIDSIM_SCREENSHOTS", tmp_path))


def _lasting(folder: Path) -> Path:
    """The monitor example over El Centro five times in a row (205 s): on a loaded machine the page's checks
    can outlast one record played in real time, and the run must still be going when the test aborts it."""
    record = np.loadtxt(MARTHS_DATA / "ground_motion_elcentro.csv", delimiter=",", skiprows=1)
    period = record[-1, 0] + (record[1, 0] - record[0, 0])
    repeated = np.vstack([record + [k * period, 0.0] for k in range(5)])
    np.savetxt(folder / "elcentro_x5.csv", repeated, delimiter=",", header="time_s,accel_m_s2", comments="")
    text = (EXAMPLES / "monitor_shear_building.toml").read_text()
    source = 'file = "hybridsim:marths/ground_motion_elcentro.csv"'
    assert source in text
    experiment = folder / "monitor_shear_building.toml"
    experiment.write_text(text.replace(source, f'file = "{folder / "elcentro_x5.csv"}"'))
    return experiment


def test_the_live_page_follows_holds_resumes_and_aborts_a_real_run(tmp_path) -> None:
    require_chromium()
    results = tmp_path / "live.h5"
    run = _hybridsim(["run", str(_lasting(tmp_path)), "--realtime", "--quiet", "--output",
                      str(results), "--monitor", "127.0.0.1:0", "--monitor-token", TOKEN], tmp_path / "run.log")
    web = None
    try:
        coordinator = _printed(tmp_path / "run.log", r"Monitor on (127\.0\.0\.1:\d+)").group(1)
        web = _hybridsim(["monitor", coordinator, "--listen", "127.0.0.1:0"], tmp_path / "web.log")
        url = _printed(tmp_path / "web.log", r"open (http://127\.0\.0\.1:\d+/)").group(1)
        with chromium() as page:
            page.get(f"{url}#token={TOKEN}")
            js = page.execute_script
            step = lambda: int(page.find_element("id", "step").text)  # noqa: E731
            state = lambda: js("return hybridsimMonitor.state()")  # noqa: E731
            _until(lambda: state() == "running" and js("return hybridsimMonitor.points()") > 20, what="running plots")
            assert js("return location.hash") == ""  # the token left the address bar

            # the plots update as steps arrive: more samples, and the response canvas redrawn
            canvas = "return document.querySelector('#plots canvas').toDataURL()"
            points, image = js("return hybridsimMonitor.points()"), js(canvas)
            _until(lambda: js("return hybridsimMonitor.points()") > points + 20, WAIT_S, "new samples")
            _until(lambda: js(canvas) != image, WAIT_S, "a redrawn plot")
            page.save_screenshot(str(_shots(tmp_path) / "monitor_live.png"))

            # requests without the token, or with a wrong one, are refused; the run goes on
            refused = "return fetch('api/hold', {method: 'POST', headers: arguments[0]}).then(r => r.status)"
            assert js(refused, {}) == 401
            assert js(refused, {"X-Hybridsim-Token": "wrong"}) == 401
            before = step()
            _until(lambda: step() > before + 10, WAIT_S, "steps after the refused hold")

            # Hold: the step counter stops within one step of the step the coordinator reported (the step in
            # flight when the hold came may still complete, and its frame arrive late on a loaded machine)
            page.find_element("id", "hold").click()
            _until(lambda: state() == "held", what=f"the held state ({state()}, {page.find_element('id', 'message').text})")
            message = page.find_element("id", "message").text
            held_at = int(re.search(r"held at step (\d+)", message).group(1))
            shown = [step()]
            for _ in range(30):  # 1.5 s held
                time.sleep(0.05)
                shown.append(step())
            assert max(shown) - held_at <= 1, (held_at, shown)
            counted = max(shown)
            page.save_screenshot(str(_shots(tmp_path) / "monitor_held.png"))

            # Resume: it counts on
            page.find_element("id", "resume").click()
            _until(lambda: state() == "running" and step() > counted + 50, WAIT_S, "steps after resume")

            # Abort (two clicks: arm, confirm): the run ends, the page says so
            abort = page.find_element("id", "abort")
            abort.click()  # arms for 4 s
            for _ in range(5):
                abort.click()  # confirms; if the arming lapsed first (a click delayed on a loaded machine), arms again
                if abort.text == "Abort":
                    break
            _until(lambda: "aborted by the operator" in page.find_element("id", "reason").text,
                   what=lambda: f"the stopped state ({state()}; button {abort.text!r}; message "
                                f"{page.find_element('id', 'message').text!r})")
            assert page.find_element("id", "state").text == "STOPPED"
            assert [e for e in console_errors(page) if "status of 401" not in e] == []  # but the refused requests
        assert run.wait(30) == 1
    finally:
        for process in (run, web):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(10)
    stored = read_results(results)
    assert re.fullmatch(r"stopped: aborted by the operator after step \d+", stored["attrs"]["status"])
    last = int(stored["attrs"]["status"].rsplit(" ", 1)[1])
    assert stored["displacement"].shape == (last + 1, 5)
    assert "stopped: aborted by the operator" in (tmp_path / "run.log").read_text()


def test_the_report_of_a_finished_run_renders_the_same_plots_and_the_j_table(tmp_path) -> None:
    require_chromium()
    results = tmp_path / "sdof.h5"
    run_experiment(example("sdof.toml"), output=results)
    with h5py.File(results, "a") as f:  # as a benchmark run carries it
        f.attrs["J"] = '{"J1": [12.5], "J2": [3.25, 4.5]}'
    report = write_report(results, tmp_path / "sdof.html")
    with chromium() as page:
        page.get(report.as_uri())
        js = page.execute_script
        _until(lambda: js("return hybridsimMonitor.redraws()") > 0, WAIT_S, "the first drawing")
        assert js("return hybridsimMonitor.points()") == len(range(0, 4119, 2))  # steps 0, 2, ... 4118
        assert js("return hybridsimMonitor.state()") == "completed"
        assert page.find_element("id", "step").text == "4118"
        assert len(page.find_elements("css selector", "#plots canvas")) == 6
        cells = [td.text for td in page.find_elements("css selector", "#report-j td")]
        assert cells == ["J1", "12.5", "J2", "3.25", "4.5"]
        assert "name = \"sdof\"" in page.find_element("id", "report-config").text
        assert console_errors(page) == []
        page.save_screenshot(str(_shots(tmp_path) / "monitor_report.png"))
