"""The web server of `hybridsim monitor` over HTTP (no browser): events, state, the controls and their token."""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.monitor.report import write_report
from hybridsim.coordinator.monitor.web import MonitorWebServer
from tests.conftest import EXAMPLES
from tests.coordinator.monitor.runs import TOKEN, example, monitored_run


def _request(port: int, method: str, path: str, headers: dict | None = None) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path, headers=headers or {})
    reply = connection.getresponse()
    return reply.status, json.loads(reply.read())


def _events(port: int) -> list[tuple[str, dict]]:
    """The server-sent events of /events up to the first frame."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/events")
    stream, events, name = connection.getresponse(), [], ""
    while not events or events[-1][0] != "frame":
        line = stream.readline().decode().rstrip("\n")
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            events.append((name, json.loads(line[6:])))
    connection.close()
    return events


def test_the_web_server_relays_the_run_and_passes_controls_only_with_the_token(tmp_path) -> None:
    with monitored_run(example("monitor_shear_building.toml"), tmp_path / "web.h5", realtime=True) as run:
        web = MonitorWebServer(("127.0.0.1", 0), run.address)
        threading.Thread(target=web.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        port = web.server_address[1]
        try:
            page = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            page.request("GET", "/")
            body = page.getresponse().read().decode()
            assert "uPlot" in body and not re.search(r"(src|href)=[\"']?(https?:)?//", body)  # all inline, no CDN

            events = dict(_events(port))  # the link, the run's info, then frames
            assert list(events)[-2:] == ["info", "frame"]
            assert events["info"]["response_dofs"] == ["x1", "x2", "x3", "x4", "x5"]
            assert events["info"]["modules"][0]["displacement_limit"] == [0.05]
            assert events["frame"]["progress"]["state"] == "running"

            assert _request(port, "POST", "/api/hold")[0] == 401
            assert _request(port, "POST", "/api/hold", {"X-Hybridsim-Token": "wrong"})[0] == 401
            status, held = _request(port, "POST", "/api/hold", {"X-Hybridsim-Token": TOKEN})
            assert (status, held["state"]) == (200, "held")
            time.sleep(0.6)
            state = _request(port, "GET", "/api/state")[1]["progress"]
            assert state["state"] == "held" and state["step"] - held["step"] <= 1
            assert _request(port, "POST", "/api/abort", {"X-Hybridsim-Token": TOKEN})[1]["state"] == "aborting"
            run.thread.join(30)
            assert _request(port, "POST", "/api/resume", {"X-Hybridsim-Token": TOKEN})[0] == 502  # gone
        finally:
            web.shutdown()
            web.server_close()


def test_a_report_refuses_a_file_that_is_not_a_results_file(tmp_path) -> None:
    (tmp_path / "notes.h5").write_text("not hdf5")
    with pytest.raises(UsageError, match="is not a hybridsim results file"):
        write_report(tmp_path / "notes.h5")


def test_a_busy_port_is_one_line_for_the_run_s_monitor_and_the_page(tmp_path) -> None:
    """`run --monitor` and `monitor --listen` on a port another program listens on: exit 2 and one line on
    standard error (no gRPC core log line, no traceback)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = f"127.0.0.1:{taken.getsockname()[1]}"
        runs = {"run": ["run", str(EXAMPLES / "sdof.toml"), "--output", str(tmp_path / "sdof.h5"), "--quiet",
                        "--monitor", busy],
                "monitor": ["monitor", "127.0.0.1:1", "--listen", busy]}
        errors = {name: subprocess.run([sys.executable, "-m", "hybridsim", *argv], capture_output=True, text=True,
                                       timeout=120) for name, argv in runs.items()}
    assert (errors["run"].returncode, errors["run"].stderr) == (
        2, f"hybridsim run: error: --monitor {busy}: cannot listen there: another program listens there; give another "
           "port, or port 0 for a free one\n")
    assert (errors["monitor"].returncode, errors["monitor"].stderr) == (
        2, f"hybridsim monitor: error: --listen {busy}: cannot serve there: another program listens there; give "
           "another port, or port 0 for a free one\n")
    assert not (tmp_path / "sdof.h5").exists()  # refused before anything ran
