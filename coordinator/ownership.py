"""Run ownership: one live run per results file.

A run (or a resume) holds ``RESULTS.h5.lock`` beside its results file from before anything moves
until the file is closed: an exclusive ``flock`` on it, and inside it the owner's PID, host and
command.  The kernel drops the lock when the owner's process ends however it ends (``kill -9``
included), so on one machine a live writer and a dead one are told apart exactly: a held lock is a
live run, a lock file whose lock is free is left by a dead one and is taken over.  A lock file
written on another host cannot be checked from here (the results folder is shared): it is refused
with the owner's host and PID, and the way to clear it once that run is known to be over.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path

from hybridsim.coordinator.errors import UsageError


def lock_path(results: Path) -> Path:
    """The lock file of a results file."""
    return results.with_name(results.name + ".lock")


class RunLock:
    """The exclusive right to write one results file; a context manager (released on exit)."""

    def __init__(self, results: str | Path, fix: str = "wait for it to end, or write elsewhere with --output NEW.h5"
                 ) -> None:
        """``fix``: what a refused user can do (a run's, by default)."""
        self.results, self.fix = Path(results), fix
        self.path = lock_path(self.results)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Hold the lock, or raise UsageError naming the live owner (PID, host, command)."""
        while True:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = _owner(fd)
                os.close(fd)
                raise UsageError(f"{self.results} is being written by a live run ({_describe(owner)}); {self.fix}"
                                 ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:  # else the lock file was removed by its owner between our open and our flock: retry
                break
            os.close(fd)
        previous = _owner(fd)
        if previous and previous.get("host") != socket.gethostname():
            os.close(fd)
            raise UsageError(f"{self.results} is held by a run on another host ({_describe(previous)}) that this "
                             f"machine cannot check; if that run has ended, delete {self.path}")
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(),
                                  "command": " ".join(sys.argv)}).encode(), 0)
        self._fd = fd

    def _open(self) -> int:
        """The lock file, opened (created); a folder that cannot hold it is one line (read-only, not a folder)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise UsageError(f"{self.results}: cannot write in {self.path.parent} ({exc.strerror}: {self.path}); "
                             "give --output a file in a folder this user can write") from None

    def release(self) -> None:
        """Remove the lock file and drop the lock (in that order: a waiting run then finds no stale file)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        os.close(fd)

    def __enter__(self) -> "RunLock":
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _owner(fd: int) -> dict[str, object]:
    """What a lock file says about its owner ({} when empty or unreadable)."""
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _describe(owner: dict[str, object]) -> str:
    if not owner:
        return "owner unknown"
    since = owner.get("since")
    started = time.strftime(" since %H:%M:%S", time.localtime(since)) if isinstance(since, (int, float)) else ""
    return f"pid {owner.get('pid')} on host {owner.get('host')}{started}: {owner.get('command', '')}".rstrip(": ")
