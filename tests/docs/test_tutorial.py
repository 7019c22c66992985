"""docs/tutorial.md runs as written: every file it saves, every command it types, every output it shows.

The tutorial's blocks (tests/docs/tutorial.py) run in order in one bash, in an empty folder, with this checkout's
``hybridsim`` first on PATH; each command prints what the tutorial shows (``...`` stands for anything, as in a
doctest; whitespace runs compare equal), a command that ends with ``&`` runs in the background until it has.
The tutorial's ports are replaced by free ones.
"""

from __future__ import annotations

import doctest
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.docs.tutorial import TUTORIAL, Command, File, tutorial_steps

PORTS = ("50061", "50062", "8090")
"""the ports the tutorial's commands listen on"""
COMMAND_TIMEOUT_S = 300.0
"""the bound on one command (a run of 2000 steps takes about 3 s on an idle machine)"""
CHECK = doctest.OutputChecker()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


class Shell:
    """One bash that runs commands in order, each one's output in files of its own."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.logs = folder / ".outputs"
        self.logs.mkdir()
        self.process = subprocess.Popen(["bash"], stdin=subprocess.PIPE, cwd=folder, env=env, text=True,
                                        start_new_session=True)
        self.count = 0

    def send(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text)
        self.process.stdin.flush()

    def run(self, line: str) -> tuple[int, Path, Path]:
        """Run ``line`` (in the background when it ends with '&'); its exit code (0 for a background one), stdout
        and stderr files."""
        self.count += 1
        out, err, rc = (self.logs / f"{self.count}.{suffix}" for suffix in ("out", "err", "rc"))
        if line.endswith("&"):
            self.send(f"{line[:-1]} >{out} 2>{err} &\necho 0 >{rc}\n")
        else:
            self.send(f"{{ {line}\n}} >{out} 2>{err}; echo $? >{rc}\n")
        deadline = time.monotonic() + COMMAND_TIMEOUT_S
        while not rc.exists() or not rc.read_text().strip():
            if time.monotonic() > deadline:
                raise AssertionError(f"{line!r} did not end in {COMMAND_TIMEOUT_S} s")
            time.sleep(0.05)
        return int(rc.read_text()), out, err

    def close(self) -> None:
        """End the bash and what it left running (its own process group)."""
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        self.process.wait(10)


def printed_as_shown(command: Command, out: Path, err: Path, background: bool) -> None:
    """The command printed its expected output (a background one: within a minute)."""
    deadline = time.monotonic() + (60.0 if background else 0.0)
    while True:
        got = out.read_text() if out.exists() else ""  # a background command opens it when it starts
        if CHECK.check_output(command.expected, got, FLAGS):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"$ {command.line}\nexpected:\n{command.expected}\ngot:\n{got}\n"
                                 f"standard error:\n{err.read_text()}")
        time.sleep(0.1)


def test_the_tutorial_runs_as_written(tmp_path) -> None:
    pytest.importorskip("openseespy.opensees")
    text = TUTORIAL.read_text()
    for port in PORTS:
        text = re.sub(rf"\b{port}\b", str(free_port()), text)
    steps = tutorial_steps(text)
    assert sum(isinstance(s, Command) for s in steps) >= 10 and sum(isinstance(s, File) for s in steps) >= 6
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    shell = Shell(tmp_path, env)
    try:
        for step in steps:
            if isinstance(step, File):
                assert shell.run(f"cat {'>>' if step.append else '>'} {step.name} <<'TUTORIAL_FILE_END'\n"
                                 f"{step.text}TUTORIAL_FILE_END")[0] == 0
                continue
            code, out, err = shell.run(step.line)
            assert code == 0, f"$ {step.line}\nexit {code}\n{err.read_text()}"
            printed_as_shown(step, out, err, step.line.endswith("&"))
    finally:
        shell.close()
    folder = tmp_path / "first-test"
    assert (folder / "results" / "frame.h5").exists() and (folder / "results" / "frame.html").exists()
