"""Screenshots of the monitor for docs/: a real-time run of examples/monitor_shear_building.toml, then a report;
the tutorial's frame (docs/tutorial.md: an experimental site and an OpenSees storey that name their DOFs only in
their own configurations) live, then its report.

    python -m tests.coordinator.monitor.screenshots docs
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from pathlib import Path

from hybridsim.coordinator.monitor.report import write_report
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES
from tests.coordinator.monitor.browser import chromium
from tests.coordinator.monitor.runs import TOKEN, example
from tests.coordinator.monitor.test_page import _hybridsim, _printed, _until
from tests.docs.tutorial import tutorial_files

SIZE = (1400, 2300)
FRAME_SIZE = (1400, 2900)


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="hybridsim-shots-"))
    run = _hybridsim(["run", str(EXAMPLES / "monitor_shear_building.toml"), "--realtime", "--quiet", "--output",
                      str(work / "live.h5"), "--monitor", "127.0.0.1:0", "--monitor-token", TOKEN], work / "run.log")
    coordinator = _printed(work / "run.log", r"Monitor on (127\.0\.0\.1:\d+)").group(1)
    web = _hybridsim(["monitor", coordinator, "--listen", "127.0.0.1:0"], work / "web.log")
    url = _printed(work / "web.log", r"open (http://127\.0\.0\.1:\d+/)").group(1)
    try:
        with chromium(*SIZE) as page:
            page.get(f"{url}#token={TOKEN}")
            _until(lambda: float(page.find_element("id", "sim-time").text) > 11.0, 60, "t = 11 s")
            page.save_screenshot(str(folder / "monitor_live.png"))
            page.find_element("id", "hold").click()
            _until(lambda: page.execute_script("return hybridsimMonitor.state()") == "held", 10, "held")
            time.sleep(0.5)
            page.save_screenshot(str(folder / "monitor_held.png"))
            page.find_element("id", "abort").click()
            page.find_element("id", "abort").click()
            _until(lambda: re.search("STOPPED", page.find_element("id", "state").text), 10, "stopped")
        results = work / "shear_building.h5"
        run_experiment(example("shear_building.toml"), output=results)
        report = write_report(results, work / "shear_building.html")
        with chromium(*SIZE) as page:
            page.get(report.as_uri())
            _until(lambda: page.execute_script("return hybridsimMonitor.redraws()") > 0, 10, "drawn")
            page.save_screenshot(str(folder / "monitor_report.png"))
    finally:
        for process in (run, web):
            if process.poll() is None:
                process.terminate()
                process.wait(10)
    frame(folder, work)
    print("\n".join(str(folder / f"monitor_{n}.png") for n in ("live", "held", "report", "frame_live", "frame_report")))


def frame(folder: Path, work: Path) -> None:
    """The tutorial's frame, its OpenSees storey in process: live at t = 8 s (the lab's storey has yielded), then
    its report."""
    tutorial_files(work)
    experiment = (work / "frame.toml").read_text().replace('address = "127.0.0.1:50061"', 'config_file = "upper.toml"')
    (work / "frame_local.toml").write_text(experiment)
    run = _hybridsim(["run", str(work / "frame_local.toml"), "--realtime", "--quiet", "--output", str(work / "frame.h5"),
                      "--monitor", "127.0.0.1:0", "--monitor-token", TOKEN], work / "frame_run.log")
    coordinator = _printed(work / "frame_run.log", r"Monitor on (127\.0\.0\.1:\d+)").group(1)
    web = _hybridsim(["monitor", coordinator, "--listen", "127.0.0.1:0"], work / "frame_web.log")
    url = _printed(work / "frame_web.log", r"open (http://127\.0\.0\.1:\d+/)").group(1)
    try:
        with chromium(*FRAME_SIZE) as page:
            page.get(f"{url}#token={TOKEN}")
            _until(lambda: float(page.find_element("id", "sim-time").text) > 8.0, 60, "t = 8 s")
            page.save_screenshot(str(folder / "monitor_frame_live.png"))
        run.wait(60)
        report = write_report(work / "frame.h5", work / "frame.html")
        with chromium(*FRAME_SIZE) as page:
            page.get(report.as_uri())
            _until(lambda: page.execute_script("return hybridsimMonitor.redraws()") > 0, 10, "drawn")
            page.save_screenshot(str(folder / "monitor_frame_report.png"))
    finally:
        for process in (run, web):
            if process.poll() is None:
                process.terminate()
                process.wait(10)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs"))
