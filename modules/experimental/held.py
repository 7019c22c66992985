"""A running site daemon's hold, seen by the operator's other commands on this machine.

``hybridsim site experimental --move-to`` runs as its own process, beside a site daemon of the same
configuration that may hold its actuators (a measured overload).  The daemon keeps its hold in a notice, a file
in this user's runtime folder named after the configuration file, its process and its address: written when
the hold is set, removed when an operator clears it and when the daemon ends; ``--move-to`` refuses while a live
daemon's notice is there (a notice of a process that ended without removing it is stale and dropped)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from hybridsim.modules.limits import Interlock
from hybridsim.wire.daemons_folders import process_alive


def _folder() -> Path:
    """This user's folder of notices (created private)."""
    root = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    folder = root / f"hybridsim-{os.getuid()}" / "holds"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def _key(config: Path) -> str:
    return hashlib.sha256(str(Path(config).resolve()).encode()).hexdigest()[:24]


def _notices(config: Path) -> list[tuple[Path, int, str]]:
    """(file, process, address) of every notice of ``config``; those of ended processes removed."""
    found = []
    for path in _folder().glob(f"{_key(config)}-*.hold"):
        _, pid, address = path.name.removesuffix(".hold").split("-", 2)
        if process_alive(int(pid)):
            found.append((path, int(pid), address))
        else:
            path.unlink(missing_ok=True)
    return found


def publish(interlock: Interlock, config: Path, address: str) -> Path:
    """Show ``interlock`` of the daemon serving ``config`` at ``address`` in its notice; the notice's path
    (the daemon removes it when it ends)."""
    _notices(config)  # drop those of daemons that ended
    path = _folder() / f"{_key(config)}-{os.getpid()}-{address}.hold"
    interlock.keep_in(path)
    return path


def held(config: Path) -> str | None:
    """Why a running daemon of ``config`` holds its site, with its address (None: none does)."""
    for path, pid, address in _notices(config):
        try:
            reason = path.read_text().strip()
        except FileNotFoundError:  # cleared meanwhile
            continue
        if reason:
            return (f"a site daemon of this configuration (process {pid}, at {address}) is held since {reason}; "
                    f"an operator clears the hold there first (hybridsim site-control {address} --clear)")
    return None
