"""The committed path of a path-dependent OpenSees model, kept in a file on the site's disk.

A path-dependent model's only exact restorable state in openseespy 3.7.1 is
its committed path (docs/opensees.md: OpenSees' database cannot restore the
models in use), which grows with the run.  Kept in memory it grew the site
(about 150 B per step) and sent in the checkpoint it passed the 4 MiB message
limit after ~70,000 steps.  So the site appends every committed (target,
increments) row to a file of its own, and a checkpoint names the file, the
number of rows and the SHA-256 of those rows: a few hundred bytes at any
step.  A restore on the site that ran the steps finds the file, checks the
digest, cuts off the rows committed after the checkpoint and replays the rest
(a restore costs a replay of the run; nothing else in OpenSees can restore
the state).  A restore that takes up a copy of the worker kept at that
checkpoint (:mod:`.forked`) needs no row: it cuts the file back and goes on
from the digest this process computed while writing them, without reading
the file (a restore at any step costs the same; a later replay checks the
rows against its own checkpoint's digest).

Folder: ``$XDG_STATE_HOME/hybridsim/opensees`` (default
``~/.local/state/hybridsim/opensees``; without a writable home
``<tmp>/hybridsim-opensees-<uid>``), mode 0700; one file per opened
session, ``<32 hex>.path``, float64 rows of the targets followed by the
number of increments.  A run that completes deletes its file, and so does a
session no checkpoint names; a stopped run's stays for a resume, until a
path-dependent module starts on this
machine after it has been untouched for the site's ``resume.path_files_s``
(:func:`remove_expired`; default 7 days).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

from hybridsim.wire.contract import ModuleError

_NAME = re.compile(r"[0-9a-f]{32}\.path")


def default_folder() -> Path:
    """Where the site keeps committed paths (created, mode 0700); a user without a writable home gets
    ``hybridsim-opensees-UID`` in the temporary folder."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    for folder in (Path(state) / "hybridsim" / "opensees",
                   Path(tempfile.gettempdir()) / f"hybridsim-opensees-{os.getuid()}"):
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder
    raise ModuleError(f"no writable folder for the committed path: {state}/hybridsim/opensees and the "
                      "temporary folder are not writable; set XDG_STATE_HOME to a writable folder")


def remove_expired(older_than_s: float, folder: Path | None = None) -> list[str]:
    """Delete the committed-path files of ``folder`` (default :func:`default_folder`) whose last write is more
    than ``older_than_s`` (s) ago: stopped runs no longer to be resumed (a running session writes its file at
    every commit); the names deleted."""
    folder = folder or default_folder()
    oldest = time.time() - older_than_s
    removed = []
    for entry in os.scandir(folder):
        if _NAME.fullmatch(entry.name):
            try:
                if entry.stat().st_mtime < oldest:
                    os.unlink(entry.path)
                    removed.append(entry.name)
            except FileNotFoundError:   # another site removed it first
                continue
    return removed


class CommittedPath:
    """Append-only rows (target m/rad x ndof, increments) of one session, with the running SHA-256 of them."""

    def __init__(self, ndof: int, folder: Path | None = None, name: str | None = None) -> None:
        self.ndof = ndof
        self.folder = folder or default_folder()
        self.name = name or f"{uuid.uuid4().hex}.path"
        self.rows = 0
        self._hash = hashlib.sha256()
        self._file = open(self.folder / self.name, "ab")

    def append(self, target: np.ndarray, increments: int) -> None:
        row = np.empty(self.ndof + 1, "<f8")
        row[:-1] = target
        row[-1] = increments
        data = row.tobytes()
        self._file.write(data)
        self._hash.update(data)
        self.rows += 1

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """(targets rows x ndof, increments) of every row so far."""
        self._file.flush()
        rows = np.fromfile(self.folder / self.name, "<f8", count=self.rows * (self.ndof + 1))
        rows = rows.reshape(self.rows, self.ndof + 1)
        return rows[:, :-1].copy(), rows[:, -1].astype(int)

    def running_digest(self) -> "hashlib._Hash":
        """A copy of the SHA-256 of the rows so far, to go on from (:meth:`reopen`)."""
        return self._hash.copy()

    def checkpoint(self) -> dict[str, object]:
        """The bounded reference a checkpoint carries (the rows are on disk first)."""
        self._file.flush()
        os.fsync(self._file.fileno())
        return {"path_file": self.name, "rows": self.rows, "sha256": self._hash.hexdigest()}

    @classmethod
    def reopen(cls, state: dict, ndof: int, label: str, folder: Path | None = None,
               running: "hashlib._Hash | None" = None) -> "CommittedPath":
        """The path a checkpoint names, cut back to its rows after checking their digest; ``running``: this
        process's running digest at the checkpoint (:meth:`running_digest`), from which it goes on without
        reading the rows (a restore that takes up a kept copy of the worker)."""
        name, rows, digest = state.get("path_file"), state.get("rows"), state.get("sha256")
        if not isinstance(name, str) or not _NAME.fullmatch(name) or not isinstance(rows, int) or rows < 0 \
                or not isinstance(digest, str):
            raise ModuleError(f"{label}: checkpoint names no valid committed-path file ({name!r}, {rows!r} rows)")
        folder = folder or default_folder()
        size = rows * (ndof + 1) * 8
        if running is not None and running.hexdigest() == digest:
            try:
                whole = (folder / name).stat().st_size >= size
            except OSError:
                whole = False
            if whole:
                os.truncate(folder / name, size)
                path = cls(ndof, folder, name)
                path.rows, path._hash = rows, running.copy()
                return path
        try:
            with open(folder / name, "rb") as f:
                data = f.read(size)
        except OSError as exc:
            raise ModuleError(f"{label}: the checkpoint's committed path {folder / name} cannot be read "
                              f"({exc.strerror}); resume on the site that ran the steps (a completed run's is "
                              "deleted, a stopped run's after the site's resume.path_files_s)") from None
        if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
            raise ModuleError(f"{label}: {folder / name} does not hold the checkpoint's {rows} committed steps "
                              "(shorter or changed); resume on the site that ran the steps")
        os.truncate(folder / name, size)
        path = cls(ndof, folder, name)
        path.rows = rows
        path._hash.update(data)
        return path

    def close(self) -> None:
        self._file.close()

    def delete(self) -> None:
        """Close and delete the file (the run completed: no resume needs it)."""
        self.close()
        (self.folder / self.name).unlink(missing_ok=True)
