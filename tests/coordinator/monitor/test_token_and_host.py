"""The monitor's token stays off the command line (a 0600 file or an environment variable; the flag warns) and
its page answers only loopback Host names (issue 15 items 6 and 11)."""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hybridsim.coordinator.monitor.web import MonitorWebServer
from tests.conftest import EXAMPLES, ROOT

TOKEN = "a-monitor-token-of-32-characters"


def _run(tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    experiment = tmp_path / "sdof.toml"
    experiment.write_text((EXAMPLES / "sdof.toml").read_text().replace("../coordinator", str(ROOT / "coordinator")))
    return subprocess.Popen([sys.executable, "-m", "hybridsim", "run", str(experiment), "--realtime", "--quiet",
                             "--output", str(tmp_path / "out.h5"), "--monitor", "127.0.0.1:0", *options],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})


def _first_lines(proc: subprocess.Popen, count: int) -> list[str]:
    lines = [proc.stderr.readline() for _ in range(count)]
    return [line.strip() for line in lines]


@pytest.mark.parametrize("how", ["file", "environment"])
def test_a_token_from_a_private_file_or_the_environment_is_not_on_the_command_line(tmp_path, how):
    token_file = tmp_path / "monitor.token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    proc = (_run(tmp_path, "--monitor-token-file", str(token_file)) if how == "file"
            else _run(tmp_path, env={"HYBRIDSIM_MONITOR_TOKEN": TOKEN}))
    try:
        lines = _first_lines(proc, 2)
        assert "access token the one given" in lines[0] and TOKEN not in "\n".join(lines)
        assert TOKEN.encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes()  # what ps shows everyone
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_a_token_file_others_may_read_is_refused_and_the_flag_warns(tmp_path):
    token_file = tmp_path / "monitor.token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o644)
    refused = subprocess.run([sys.executable, "-m", "hybridsim", "run", str(EXAMPLES / "sdof.toml"), "--monitor",
                              "127.0.0.1:0", "--monitor-token-file", str(token_file)], capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode == 2
    assert refused.stderr.strip() == (f"hybridsim run: error: --monitor-token-file: {token_file} may be read by other "
                                      f"users (mode 0644); chmod 600 {token_file}")
    proc = _run(tmp_path, "--monitor-token", TOKEN)
    try:
        assert _first_lines(proc, 1)[0].startswith("monitor: warning: --monitor-token is visible to every user of "
                                                   "this machine (ps)")
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def _get(port: int, host: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/api/state", headers={"Host": host})
    status = connection.getresponse().status
    connection.close()
    return status


def test_the_page_answers_only_loopback_host_names():
    server = MonitorWebServer(("127.0.0.1", 0), "127.0.0.1:1")  # no coordinator: the page still answers
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
            assert _get(port, host) == 200, host
        for host in ("rebound.example.com", f"rebound.example.com:{port}", "127.0.0.1.nip.io", ""):
            assert _get(port, host) == 421, host  # a rebinding page reads nothing
    finally:
        server.shutdown()
        server.server_close()
