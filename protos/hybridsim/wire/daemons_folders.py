"""The temporary folders of hybridsim processes: named for the process that owns them, removed when it ends, and
swept by the next hybridsim process to start when their owner was killed (kill -9 leaves them behind).

A local daemon's folder (its config copy, its token, its log) is ``$TMPDIR/hybridsim-site-NAME-pidPID-XXXXXXXX``;
the folder multiprocessing keeps its forkserver's socket in (``pymp-XXXXXXXX`` by default) is
``hsmpPID-XXXXXXXX`` (short: a socket's path holds at most 107 bytes).  :func:`sweep_stale` removes those of this user whose owner PID is gone (a PID
reused by another process keeps its folder: the sweep errs on the side of keeping).  The log of a daemon that
failed is moved by :func:`keep_log` to ``$TMPDIR/hybridsim-log-NAME-XXXXXXXX/site.log``, which no sweep removes:
it stays until the user removes it.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import re
import shutil
import tempfile
from pathlib import Path

OWNED = re.compile(r"^(?:hybridsim-site-.*-pid|hsmp)(\d+)-[a-z0-9_]{8}$")
"""a folder of :func:`site_folder` or :func:`multiprocessing_folder`, and its owner's PID"""

SOCKET_PATH_MAX = 107
"""the longest path of a Unix socket (Linux: sun_path of 108 bytes with its NUL)"""


def site_folder(name: str) -> Path:
    """A new private folder (mode 0700) in the temporary folder for local daemon ``name`` of this process."""
    return Path(tempfile.mkdtemp(prefix=f"hybridsim-site-{name}-pid{os.getpid()}-"))


def keep_log(folder: Path, name: str) -> Path:
    """Move the log of daemon ``name`` out of its :func:`site_folder` ``folder`` into a private folder of its own
    that no sweep removes, and remove the rest of ``folder`` (its config copy, token); the folder kept."""
    kept = Path(tempfile.mkdtemp(prefix=f"hybridsim-log-{name}-"))
    if (folder / "site.log").exists():
        os.replace(folder / "site.log", kept / "site.log")
    shutil.rmtree(folder, ignore_errors=True)
    return kept


def multiprocessing_folder() -> None:
    """Make multiprocessing keep its temporary files (the forkserver's socket) in a folder of this process's
    (removed at its exit as multiprocessing's own is, swept after a kill -9), unless it has one already."""
    config = multiprocessing.current_process()._config  # where multiprocessing.util.get_temp_dir keeps it
    prefix = os.path.join(tempfile.gettempdir(), f"hsmp{os.getpid()}-")
    if config.get("tempdir") is None and len(prefix) + len("XXXXXXXX/listener-XXXXXXXX") <= SOCKET_PATH_MAX:
        folder = tempfile.mkdtemp(prefix=os.path.basename(prefix))
        multiprocessing.util.Finalize(None, shutil.rmtree, args=(folder, True), exitpriority=-100)
        config["tempdir"] = folder


def sweep_stale() -> list[Path]:
    """Remove this user's hybridsim folders whose owner process is gone; the folders removed."""
    removed = []
    try:
        entries = list(os.scandir(tempfile.gettempdir()))
    except OSError:
        return removed
    for entry in entries:
        match = OWNED.match(entry.name)
        try:
            if match is None or not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        if not process_alive(int(match.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
