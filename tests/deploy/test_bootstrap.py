"""deploy/bootstrap.sh decides what to install: the main job (no option) installs no test-only package, --test
does; a package manager locked by another job is waited for; --dry-run prints the apt-get lines it would run.

The script runs for real in a sandbox: a copy of it beside a made-up .venv, on a PATH of the real tools it uses
plus an ``apt-get`` that records its arguments (and answers as a locked package manager for its first N calls),
an ``id`` that says root and an ``ldconfig`` that knows or does not know libblas.so.3.  A machine "without the
test packages" is a PATH without chromium, chromedriver, dockerd, docker-compose and debootstrap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

TOOLS = ("bash", "sed", "grep", "awk", "mktemp", "sleep", "cat", "rm", "dirname", "touch")
LOCKED = ("E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)\n"
          "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?")
MAIN_JOB = [["install", "-y", "-q", "libblas3", "liblapack3"]]
TEST_PACKAGES = [["install", "-y", "-q", "chromium", "chromium-driver"],
                 ["install", "-y", "-q", "docker.io", "docker-compose", "debootstrap"]]


def script(path: Path, text: str) -> None:
    path.write_text("#!/bin/bash\n" + text)
    path.chmod(0o755)


@pytest.fixture
def sandbox(tmp_path):
    """(folder, run): ``run(*options, blas=False, locked_calls=0, **env)`` runs the copied script; it returns the
    finished process and the apt-get calls (each a list of its arguments)."""
    repo, bin_ = tmp_path / "repo", tmp_path / "bin"
    (repo / "deploy").mkdir(parents=True)
    (repo / ".venv" / "bin").mkdir(parents=True)
    bin_.mkdir()
    shutil.copy(ROOT / "deploy" / "bootstrap.sh", repo / "deploy" / "bootstrap.sh")
    (repo / "pyproject.toml").write_text("")
    script(repo / ".venv" / "bin" / "python", "exit 0\n")  # the package imports: nothing for pip to do
    os.utime(repo / "pyproject.toml", (1, 1))
    (repo / ".venv" / ".installed").write_text("")
    for tool in TOOLS:
        os.symlink(shutil.which(tool), bin_ / tool)
    script(bin_ / "id", 'echo 0\n')
    calls = tmp_path / "apt-calls"
    script(bin_ / "apt-get", f'echo "$*" >> {calls}\n'
                             f'n=$(wc -l < {calls})\n'
                             f'if [ "$n" -le "${{LOCKED_CALLS:-0}}" ]; then printf "%s\\n" "{LOCKED}" >&2; exit 100; fi\n')
    os.symlink(shutil.which("wc"), bin_ / "wc")

    def run(*options: str, blas: bool = False, locked_calls: int = 0, **env: str):
        script(bin_ / "ldconfig", "echo 'libblas.so.3 (libc6,x86-64) => /usr/lib/libblas.so.3'\n" if blas else "true\n")
        calls.unlink(missing_ok=True)
        done = subprocess.run(["bash", str(repo / "deploy" / "bootstrap.sh"), *options], capture_output=True, text=True,
                              timeout=60, env={"PATH": str(bin_), "LOCKED_CALLS": str(locked_calls), **env})
        made = [line.split() for line in calls.read_text().splitlines()] if calls.exists() else []
        return done, made

    return repo, run


def test_the_main_job_installs_what_a_run_needs_and_no_test_package(sandbox) -> None:
    _, run = sandbox
    done, calls = run()
    assert done.returncode == 0, done.stderr
    assert calls == MAIN_JOB
    done, calls = run(blas=True)
    assert (done.returncode, calls) == (0, [])


def test_the_test_command_installs_the_browser_and_container_packages(sandbox) -> None:
    _, run = sandbox
    done, calls = run("--test")
    assert done.returncode == 0, done.stderr
    assert calls == MAIN_JOB + TEST_PACKAGES


def test_dry_run_prints_the_apt_lines_and_runs_none(sandbox) -> None:
    _, run = sandbox
    done, calls = run("--dry-run")
    assert (done.returncode, calls) == (0, [])
    assert [line for line in done.stdout.splitlines() if "would run: apt-get" in line] == \
        ["bootstrap: would run: apt-get install -y -q libblas3 liblapack3"]
    done, _ = run("--dry-run", "--test")
    assert [line.split("would run: ")[1] for line in done.stdout.splitlines() if "would run: apt-get" in line] == \
        ["apt-get " + " ".join(call) for call in MAIN_JOB + TEST_PACKAGES]


def test_a_locked_package_manager_is_waited_for(sandbox) -> None:
    _, run = sandbox
    done, calls = run(locked_calls=2, BOOTSTRAP_APT_RETRY_S="0.1")
    assert done.returncode == 0, done.stderr
    assert calls == MAIN_JOB * 3  # twice locked, then installed; the package lists were not refreshed
    assert done.stderr == ("bootstrap: waiting for the package manager: another apt or dpkg job holds its lock "
                           "(held by process 4242 (apt-get))\n")


def test_a_package_manager_locked_too_long_is_one_message_and_exit_1(sandbox) -> None:
    _, run = sandbox
    done, calls = run(locked_calls=1000, BOOTSTRAP_APT_RETRY_S="0.1", BOOTSTRAP_APT_WAIT_S="0.3")
    assert done.returncode == 1 and set(map(tuple, calls)) == {tuple(MAIN_JOB[0])}  # no update tried meanwhile
    assert done.stderr.splitlines()[-1] == ("bootstrap: the package manager stayed locked for 0.3 s; let the other job "
                                            "finish (or set BOOTSTRAP_APT_WAIT_S) and run bootstrap again")
