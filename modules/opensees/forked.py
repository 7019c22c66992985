"""A path-dependent OpenSees model in a worker process whose committed state is a frozen fork of it.

openseespy commits its domain at every converged static step and offers no
``revertToLastCommit`` (``StaticAnalysis::analyze`` runs ``theIntegrator->commit()``
after every solved step; only a failed one reverts), and its database cannot
restore the models in use (docs/opensees.md says why), so a trial the
coordinator discards cannot be undone inside OpenSees.  What stays exact and
costs the same at every step is a copy of the whole process taken at the
commit: the model runs in a worker process (:mod:`.worker`) that forks a
frozen *snapshot* of itself when a step is committed; a discard hands over to
the snapshot, which forks a snapshot of its own and becomes the worker.
Nothing is rebuilt or replayed.

Forks are taken only where they are needed: after a build, a replay, and the
commits of a run whose scheme discards trials (iterative schemes).  A scheme
that never discarded after a commit (alpha-OS) commits without a fork; its
first discard after a commit finds no copy, and the module then rebuilds and
replays once and asks for a snapshot at every commit from then on.

A *keeper* process, the worker's parent, is the family's subreaper (processes
whose parent exited are reparented to it) and ignores SIGCHLD, so no process
of the family stays a zombie; it exits when the last one has.  Every frozen
process also watches a lifeline pipe whose only writer is the module: when
the module's process ends, however it ends, they all exit.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
from typing import Any

import numpy as np

from hybridsim.wire.contract import ModuleError

_LENGTH = struct.Struct("<I")
LIVENESS_CHECK_S = 1.0
"""how often a module waiting for its worker checks that the worker's family is alive (s)"""


def write_message(fd: int, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exact(fd: int, size: int) -> bytes | None:
    """``size`` bytes from ``fd``; None at end of file."""
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, remaining)
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_message(fd: int) -> Any:
    """The next message on ``fd``; None at end of file (the other side is gone)."""
    head = _read_exact(fd, _LENGTH.size)
    if head is None:
        return None
    body = _read_exact(fd, _LENGTH.unpack(head)[0])
    return None if body is None else pickle.loads(body)


# -- the module's side -------------------------------------------------------------------------------------
class ForkedModel:
    """The module's handle on a worker process that holds a path-dependent model (see the module docstring)."""

    def __init__(self, spec: object, label: str) -> None:
        self._label = label
        life_read, self._lifeline = os.pipe()
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        try:
            self._keeper = subprocess.Popen([sys.executable, "-P", "-m", "hybridsim.modules.opensees.worker",
                                             str(life_read)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            pass_fds=(life_read,), env=env, bufsize=0)
        finally:
            os.close(life_read)
        self._requests = self._keeper.stdin.fileno()  # type: ignore[union-attr]
        self._answers = self._keeper.stdout.fileno()  # type: ignore[union-attr]
        self._worker_pid = self._keeper.pid
        self._pending = 0
        """answers of commits not read yet (a commit does not wait for its answer)"""
        try:
            self._call(("build", spec, label))
        except ModuleError:
            self.close()
            raise

    def impose(self, target: np.ndarray, increments: int) -> tuple[bool, str, np.ndarray, np.ndarray]:
        """(converged, failure text, displacement, force) after imposing ``target`` in ``increments`` solves."""
        return self._call(("impose", np.asarray(target, float), int(increments)))

    def commit(self, snapshot: bool) -> None:
        """The state now is the committed state; ``snapshot``: keep a copy of it for a discard (the worker
        forks after answering).  Does not wait for the answer: the next request reads it."""
        self._send(("commit", bool(snapshot)))
        self._pending += 1

    def discard(self) -> bool:
        """Back to the committed state (a copy of it takes over); False: there is no copy (a commit without
        snapshot), the worker is unchanged."""
        return self._call(("discard",), handing_over=True)

    def replay(self, targets: np.ndarray, increments: np.ndarray) -> None:
        """Impose committed targets (rows, m/rad) with their increments in order in the worker, then commit."""
        self._call(("replay", np.asarray(targets, float), np.asarray(increments, int)))

    def close(self) -> None:
        """End the worker and every snapshot (idempotent)."""
        if self._keeper.poll() is None:
            try:
                write_message(self._requests, ("quit",))
            except OSError:
                pass
        if self._lifeline >= 0:
            os.close(self._lifeline)
            self._lifeline = -1
        for stream in (self._keeper.stdin, self._keeper.stdout):
            if stream is not None:
                stream.close()
        try:
            self._keeper.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._keeper.kill()
            self._keeper.wait()

    def _send(self, request: tuple) -> None:
        try:
            write_message(self._requests, request)
        except OSError as exc:
            raise ModuleError(f"{self._label}: the OpenSees worker process is gone ({exc})") from None

    def _call(self, request: tuple, handing_over: bool = False) -> Any:
        self._send(request)
        while self._pending:
            self._pending -= 1
            self._receive("commit", False)
        return self._receive(request[0], handing_over)

    def _receive(self, what: str, handing_over: bool) -> Any:
        while not select.select([self._answers], [], [], LIVENESS_CHECK_S)[0]:
            if self._keeper.poll() is not None or (not handing_over and not _alive(self._worker_pid)):
                raise ModuleError(f"{self._label}: the OpenSees worker process died during {what!r}")
        answer = read_message(self._answers)
        if answer is None:
            raise ModuleError(f"{self._label}: the OpenSees worker process ended during {what!r}")
        self._worker_pid, error, result = answer
        if error:
            raise ModuleError(error)
        return result


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
