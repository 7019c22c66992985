"""SIGTERM, a double SIGINT and a terminal's Ctrl-C stop a run cleanly (issue 15 item 7): exit 143 / 130 with
one line, status `stopped: interrupted`, every site session closed, every written row a completed step, and
a resume that ends where the uninterrupted run ends.  Real coordinator and site processes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.recorder import read_attributes, read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES, ROOT

SDOF = (EXAMPLES / "sdof.toml").read_text().replace("../coordinator", str(ROOT / "coordinator"))
MODULE = 'config = { dofs = ["x"], stiffness = [[39478.417604357434]] }'


def _experiment(tmp_path: Path, address: str) -> Path:
    path = tmp_path / "sdof.toml"
    path.write_text(SDOF.replace(MODULE, f'{MODULE}\naddress = "{address}"')
                    .replace('file = "results/sdof.h5"', 'file = "results/sdof.h5"\ncheckpoint_every = 100'))
    return path


def _site(tmp_path: Path) -> tuple[subprocess.Popen, str, Path]:
    """A linear site daemon on loopback, its address and its log."""
    (tmp_path / "column.toml").write_text('dofs = ["x"]\nstiffness = [[39478.417604357434]]\n')
    log = tmp_path / "site.log"
    port = tmp_path / "port"
    with open(log, "wb") as out:
        site = subprocess.Popen([sys.executable, "-m", "hybridsim", "site", "linear", "--config",
                                 str(tmp_path / "column.toml"), "--listen", "127.0.0.1:0", "--port-file", str(port)],
                                stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while not port.exists():
        assert site.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    return site, f"127.0.0.1:{port.read_text().strip()}", log


def running(tmp_path: Path, experiment: Path, output: Path, **popen) -> subprocess.Popen:
    """A real-time run that has recorded its first 300 rows."""
    run = subprocess.Popen([sys.executable, "-m", "hybridsim", "run", str(experiment), "--realtime", "--quiet",
                            "--output", str(output)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, **popen)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if int(read_attributes(output)["completed_steps"]) > 300:
                return run
        except (OSError, KeyError):
            pass
        time.sleep(0.1)
    run.kill()
    raise AssertionError(f"the run did not get going: {run.communicate()}")


def _only_completed_rows(output: Path) -> int:
    """The file's rows are completed steps: rows = completed_steps, t_k = k dt, step IDs increasing."""
    stored = read_results(output)
    rows = int(stored["attrs"]["completed_steps"])
    assert stored["time"].shape == (rows,)
    assert np.array_equal(stored["time"], np.arange(rows) * 0.01)
    assert np.all(np.diff(stored["step_id"]) > 0)
    return rows


@pytest.mark.parametrize("signals", [(signal.SIGTERM,), (signal.SIGINT, signal.SIGINT)], ids=["SIGTERM", "SIGINTx2"])
def test_a_signal_stops_the_run_closes_the_session_and_resume_ends_like_the_uninterrupted_run(tmp_path, signals):
    site, address, log = _site(tmp_path)
    output = tmp_path / "stopped.h5"
    try:
        run = running(tmp_path, _experiment(tmp_path, address), output)
        for sig in signals:
            run.send_signal(sig)
            time.sleep(0.02)
        _, err = run.communicate(timeout=30)
        assert run.returncode == 130, err  # SIGINT and SIGTERM alike
        assert read_attributes(output)["status"] == "stopped: interrupted"
        rows = _only_completed_rows(output)
        assert 300 < rows < 4119
        checkpoint = _checkpoint_said(err, rows)
        said = "hybridsim run: interrupted" if signals[0] == signal.SIGINT else "hybridsim run: interrupted by SIGTERM"
        assert err.strip().splitlines()[-1] == said + _kept(output, rows, checkpoint)
        assert "closed by the coordinator" in log.read_text()
        resumed = subprocess.run([sys.executable, "-m", "hybridsim", "resume", str(output), "--quiet"], cwd=tmp_path,
                                 capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        assert f"resumed from the checkpoint at step {checkpoint}:" in resumed.stdout  # where the stop line said
    finally:
        site.send_signal(signal.SIGTERM)
        site.wait(30)
    reference = run_experiment(_in_process(tmp_path), output=tmp_path / "ref.h5")
    final = read_results(output)
    assert final["attrs"]["status"] == "completed"
    assert np.max(np.abs(final["displacement"] - reference.displacement)) <= 1e-12 * np.max(np.abs(reference.displacement))


def _checkpoint_said(err: str, rows: int) -> int:
    """The checkpoint the stop line names: a multiple of checkpoint_every (100), the last among the completed steps
    (rows - 1), or the one before it when the signal cut short the step that was writing that one."""
    step = int(re.search(r"continues from step (\d+)$", err.strip()).group(1))
    assert step % 100 == 0 and rows - 1 - 100 <= step <= rows - 1, (step, rows)
    return step


def _kept(output: Path, rows: int, checkpoint: int) -> str:
    """What the stop line adds: the completed steps the file keeps (its rows less the initial state) and where a
    resume starts."""
    return (f"; {output} keeps {rows - 1} completed steps; `hybridsim resume {output}` continues from step "
            f"{checkpoint}")


def _in_process(tmp_path: Path):
    path = tmp_path / "inprocess.toml"
    path.write_text(SDOF)
    return load_experiment(path)


def _daemons_of(pid: int) -> list[int]:
    """PIDs of the live local daemons a coordinator with ``pid`` started (they carry --parent-pid PID)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--parent-pid" in args and args[args.index(b"--parent-pid") + 1] == str(pid).encode():
            found.append(int(entry.name))
    return found


def test_a_terminal_ctrl_c_ends_the_run_within_2_s_and_the_coordinator_stops_its_daemons(tmp_path):
    output = tmp_path / "ctrl_c.h5"
    run = running(tmp_path, _experiment(tmp_path, "local"), output, start_new_session=True)
    daemons = _daemons_of(run.pid)
    assert len(daemons) == 1 and os.getpgid(daemons[0]) != run.pid  # the daemon is not in the terminal's group
    started = time.monotonic()
    os.killpg(run.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    _, err = run.communicate(timeout=30)
    elapsed = time.monotonic() - started
    assert elapsed < 2.0
    assert read_attributes(output)["status"] == "stopped: interrupted"
    rows = _only_completed_rows(output)
    assert run.returncode == 130
    said = "hybridsim run: interrupted" + _kept(output, rows, _checkpoint_said(err, rows))
    assert err.strip().splitlines()[-1] == said
    assert _daemons_of(run.pid) == []
