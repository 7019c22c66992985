"""A private Docker engine for the container tests: its own dockerd, socket and data under a temporary folder.

The daemon runs in a network namespace of its own (``unshare --net``): the bridges of the compose networks,
their addresses and firewall rules exist only there, beside a loopback that is down, so no container can
reach anything outside this machine, nor anything of the machine's own network. Images come from
``deploy/containers.sh`` (a Debian base and a wheelhouse cached on the machine; builds with ``--network
none``). :meth:`Engine.stop` removes every container, the daemon and its folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

DOCKER = "/usr/bin/docker"
"""the engine's own client (Debian's docker.io), whatever other `docker` is first on PATH"""
TOOLS = {"dockerd": "docker.io", "docker-compose": "docker-compose", "debootstrap": "debootstrap",
         "unshare": "util-linux"}


def unavailable() -> str | None:
    """Why no private engine can start here (None: it can be tried)."""
    if os.geteuid() != 0:
        return "containers: a private dockerd needs root (CI runs as root)"
    missing = [package for tool, package in TOOLS.items() if shutil.which(tool) is None]
    if missing or not os.access(DOCKER, os.X_OK):
        return (f"containers: packages {', '.join(missing or ['docker.io'])} are missing "
                "(deploy/bootstrap.sh installs them when run as root)")
    return None


class Engine:
    """dockerd on ``FOLDER/docker.sock`` with ``FOLDER/data`` as its data root."""

    def __init__(self, folder: Path, process: subprocess.Popen) -> None:
        self.folder, self._process = folder, process
        self.env = {**os.environ, "DOCKER_HOST": f"unix://{folder}/docker.sock", "DOCKER": DOCKER,
                    "COMPOSE_INTERACTIVE_NO_CLI": "1"}

    @classmethod
    def start(cls, timeout_s: float = 60.0) -> Engine:
        """Start the daemon; RuntimeError with its log's last lines if it does not answer within ``timeout_s``."""
        folder = Path(tempfile.mkdtemp(prefix="hybridsim-docker-"))  # short: socket paths hold 107 bytes
        log = open(folder / "dockerd.log", "wb")
        process = subprocess.Popen(
            ["unshare", "--net", "--", "dockerd", "--data-root", str(folder / "data"), "--exec-root",
             str(folder / "exec"), "--pidfile", str(folder / "dockerd.pid"), "--host", f"unix://{folder}/docker.sock",
             "--bridge", "none"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        engine = cls(folder, process)
        deadline = time.monotonic() + timeout_s
        while engine.docker("info", check=False).returncode != 0:
            if process.poll() is not None or time.monotonic() > deadline:
                tail = (folder / "dockerd.log").read_text(errors="replace").splitlines()[-5:]
                engine.stop()
                raise RuntimeError("dockerd did not start: " + " | ".join(tail))
            time.sleep(0.5)
        return engine

    def docker(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
        """``docker ARGS`` against this engine (output captured)."""
        return subprocess.run([DOCKER, *args], env=self.env, capture_output=True, text=True, check=check,
                              timeout=timeout)

    def run(self, command: list[str], timeout: float = 900, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """Any command with DOCKER_HOST set to this engine (and ``env``; output captured), e.g. docker-compose."""
        return subprocess.run(command, env={**self.env, **(env or {})}, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout)

    def stop(self) -> None:
        """Remove every container, stop the daemon (SIGKILL after 30 s) and delete its folder."""
        if self._process.poll() is None:
            containers = self.docker("ps", "-aq", check=False).stdout.split()
            if containers:
                self.docker("rm", "-f", "-v", *containers, check=False)
            self._process.terminate()
            try:
                self._process.wait(30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)
        for mount in reversed(_mounts_under(self.folder)):  # what a killed daemon may leave mounted
            subprocess.run(["umount", "-l", mount], check=False)
        shutil.rmtree(self.folder, ignore_errors=True)


def _mounts_under(folder: Path) -> list[str]:
    with open("/proc/self/mounts") as mounts:
        return [line.split()[1] for line in mounts if line.split()[1].startswith(str(folder))]
