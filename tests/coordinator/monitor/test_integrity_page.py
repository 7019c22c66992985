"""The integrity indicators on the live page, in headless Chromium: the lagging SDOF of test_hold.py (an uncompensated
first-order actuator at a virtual lab; [integrity] holds its site at E_err / E_in = 20), watched from its first step.
What the page plots is the run's own record (the results file's indicator datasets at the page's steps), the
threshold line sits at the declared 20, the crossing is shown with its step (the run's, from the file's stop) and
action, and the final state names the hold.  The report of the same file carries the same frames.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.integrity.columns import BALANCE_TERMS
from hybridsim.coordinator.monitor.report import report_html
from hybridsim.coordinator.monitor.web import MonitorWebServer
from hybridsim.v1 import monitor_pb2 as pb
from tests.coordinator.integrity.test_hold import THETA, lagging_sdof
from tests.coordinator.monitor.browser import chromium, console_errors, require_chromium
from tests.coordinator.monitor.runs import TOKEN, monitored_run
from tests.coordinator.monitor.test_page import _shots, _until

pytestmark = pytest.mark.timeout(240)

ENERGY_ERROR = "column: energy error E_err / E_in"
BALANCE = "Whole structure: energy balance"


def test_the_live_page_plots_the_run_s_indicators_their_threshold_and_the_hold(tmp_path: Path) -> None:
    require_chromium()
    experiment = lagging_sdof(tmp_path, "held", {"kind": "none"}, {"energy_error": THETA, "action": "hold"})
    with monitored_run(experiment, tmp_path / "held.h5", hold_after=1) as run, chromium(1400, 1500) as page:
        web = MonitorWebServer(("127.0.0.1", 0), run.address)
        threading.Thread(target=web.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        try:
            page.get(f"{web.url}#token={TOKEN}")
            js = page.execute_script
            state = lambda: js("return hybridsimMonitor.state()")  # noqa: E731
            _until(lambda: state() == "held", what=lambda: f"the run held after its first step ({state()!r})")
            page.find_element("id", "resume").click()
            _until(lambda: state().startswith("stopped"), what=lambda: f"the run stopped ({state()!r})")
            _until(lambda: js("return hybridsimMonitor.redraws()") > 0 and not page.find_element("id", "crossings")
                   .get_attribute("hidden"), what="the crossing shown")
            page.save_screenshot(str(_shots(tmp_path) / "monitor_integrity.png"))
            steps = np.array(js("return hybridsimMonitor.steps()"))
            error = js(f"return hybridsimMonitor.plotted({ENERGY_ERROR!r})")
            balance = js(f"return hybridsimMonitor.plotted({BALANCE!r})")
            titles = [e.text for e in page.find_elements("css selector", "#plots h2")]
            crossing = [td.text for td in page.find_elements("css selector", "#crossings-body td")]
            reason = page.find_element("id", "reason").text
            now = page.find_element("id", "integrity-now").text
            sync = js("return hybridsimMonitor.plotted('sync')")
            assert console_errors(page) == []
        finally:
            web.shutdown()
            web.server_close()
    with h5py.File(tmp_path / "held.h5") as f:
        recorded = {"error": f["integrity/modules/column/energy_error"][()], "balance": f["integrity/balance"][()],
                    "tracking": f["integrity/modules/column/tracking"][()]}
        stop = json.loads(f.attrs["stop"])
    held = stop["step"] - 1  # the hold is set after the crossing step; the gate refuses the next
    assert steps[-1] == held and steps.size > 50  # every decimated step and the last, up to the crossing
    assert error["labels"][1:] == ["energy error E_err / E_in", f"threshold {THETA:g} (hold)"]
    np.testing.assert_array_equal(error["data"][1], recorded["error"][steps])
    assert error["data"][2] == [THETA] * steps.size  # the threshold line at the declared value
    assert error["data"][1][-1] > THETA >= max(error["data"][1][:-1])  # first past it at the last step
    assert error["marks"] == [error["data"][0][-1]] == [balance["marks"][0]]  # the crossing's time marked
    assert balance["labels"][1:] == list(BALANCE_TERMS)
    np.testing.assert_array_equal(np.array(balance["data"][1:]).T, recorded["balance"][steps])
    assert {"column: tracking indicator TI", "column: online delay estimate", "Whole structure: energy error "
            "E_err / E_in", "Synchronization subspace"} <= set(titles)
    assert sync["labels"][1] == "column x"  # the site's interface DOF: command against measurement
    assert crossing == ["column", "energy_error", f"{recorded['error'][held]:.4g}", f"{THETA:g}", str(held),
                        f"{held * 0.005:.4f}", "hold"]
    assert now == f"integrity: column energy_error {recorded['error'][held]:.4g} of {THETA:g}"  # at the last step
    assert "held since integrity: column's energy error" in reason and f"step {held}" in reason, reason
    report = json.loads(re.search(r'id="run-data">(.*?)</script>', report_html(tmp_path / "held.h5"), re.S).group(1))
    indicators = {i["dataset"]: i for i in report["info"]["indicators"]}
    assert indicators["integrity/modules/column/energy_error"]["threshold"] == THETA
    assert [c["step"] for c in report["frames"][-1]["progress"]["crossings"]] == [held]


def test_a_stop_is_the_observers_final_state_with_its_crossing(tmp_path: Path) -> None:
    """action = "stop" at E_err / E_in = 2 (test_hold.py's stop): the Watch stream's last frame is stopped by the
    indicator at the step the results file's stop names, and carries the crossing with its action."""
    experiment = lagging_sdof(tmp_path, "stopped", {"kind": "none"}, {"energy_error": 2.0, "action": "stop"})
    with monitored_run(experiment, tmp_path / "stopped.h5", hold_after=1) as run:
        events = run.stub().Watch(pb.WatchRequest(), timeout=60)
        info = next(iter(events)).info
        run.outcome["hooks"]["control"].resume()
        last = [event.frame.progress for event in events][-1]
        run.thread.join(30)
    with h5py.File(tmp_path / "stopped.h5") as f:
        stop, recorded = json.loads(f.attrs["stop"]), f["integrity/modules/column/energy_error"][()]
    watched = {i.dataset: i for i in info.indicators}["integrity/modules/column/energy_error"]
    assert (watched.threshold, watched.action, watched.unit) == (2.0, "stop", "1")
    crossed = stop["step"] - 1  # the run ends after the crossing step
    assert last.state == f"stopped: {stop['reason']}" and "integrity: column's energy error" in last.state
    assert [(c.indicator, c.step, c.value, c.action) for c in last.crossings] == \
        [("energy_error", crossed, recorded[crossed], "stop")]
