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

Checkpoints.  At a checkpoint the worker also forks a *kept copy* of its
committed state (:meth:`ForkedModel.keep`, named by the checkpoint); the
family holds the last :data:`KEPT_COPIES` and kills older ones.  A restore
whose checkpoint names a kept copy takes it up (:meth:`ForkedModel.take_up`):
the worker quits and the copy forks the new worker, in milliseconds at any
step.  When the module closes (a coordinator that crashed or stopped: the
next session's ``Open`` closes it) a family holding kept copies is *parked*
in this process instead of ended (at most :data:`PARKED_FAMILIES`, the
oldest ended first, and each after the ``parked_for_s`` it was made with),
so that the module the site builds for the resumed session can take it up
(:func:`adopt`).  Parked families keep their lifeline: they end with this
process.  A module whose run completed ends its family instead of parking it.
"""

from __future__ import annotations

import functools
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hybridsim.wire.contract import ModuleError

_LENGTH = struct.Struct("<I")
LIVENESS_CHECK_S = 1.0
"""how often a module waiting for its worker checks that the worker's family is alive (s)"""
TAKE_UP_TIMEOUT_S = 30.0
"""the longest a restore waits for the worker a kept copy forks (s); it answers in milliseconds, so a copy that
has not is broken and the restore replays the path instead"""
KEPT_COPIES = 2
"""checkpoints whose committed state a family keeps as frozen copies: the results file's two checkpoint slots
(a crash while the newer slot is written resumes from the older)"""
PARKED_FAMILIES = 2
"""families of closed modules that this process keeps for a restore (a site daemon serves one module)"""
_parked: list["ForkedModel"] = []
_parked_lock = threading.Lock()
"""guards :data:`_parked` (a parked family's expiry runs on a timer thread)"""
_ending: list[subprocess.Popen] = []
"""keepers of families ended without waiting, reaped when the next family starts"""
log = logging.getLogger(__name__)


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
@dataclass(frozen=True)
class KeptCopy:
    """A frozen copy of a worker at a checkpoint."""

    pid: int
    pidfd: int
    memo: object
    """what the module keeps with it (the committed path's digest at that checkpoint)"""


class ForkedModel:
    """The module's handle on a worker process that holds a path-dependent model (see the module docstring)."""

    def __init__(self, spec: object, label: str, parked_for_s: float = float("inf")) -> None:
        """``parked_for_s``: once parked (:meth:`release`), the family ends after this long (s) unless adopted."""
        self.spec = spec
        self._label = label
        self._parked_for_s = parked_for_s
        self._expiry: threading.Timer | None = None
        _ending[:] = [keeper for keeper in _ending if keeper.poll() is None]
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
        self.kept: OrderedDict[Hashable, KeptCopy] = OrderedDict()
        """kept copies, oldest first, by the checkpoint they hold"""
        try:
            self._call(("build", spec, label))
        except ModuleError:
            self.close()
            raise

    def impose(self, target: np.ndarray, increments: int) -> tuple[bool, str, np.ndarray, np.ndarray, np.ndarray]:
        """(converged, failure text, displacement, force, force-controlled DOFs' displacement) after imposing
        ``target`` in ``increments`` solves."""
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

    def keep(self, key: Hashable, memo: object = None) -> None:
        """Keep a frozen copy of the state now (the committed state) for a restore of the checkpoint ``key``,
        with ``memo`` (what the module needs with it); the oldest copy beyond :data:`KEPT_COPIES` is killed."""
        if key in self.kept or not pidfds_available():
            return
        pid = self._call(("keep",))
        self.kept[key] = KeptCopy(pid, os.pidfd_open(pid), memo)  # the copy waits to be signalled: it is alive
        while len(self.kept) > KEPT_COPIES:
            _kill(self.kept.popitem(last=False)[1].pidfd)

    def keeps(self, key: Hashable) -> bool:
        """Whether a copy of the checkpoint ``key`` is kept and alive."""
        if key not in self.kept:
            return False
        if _exited(self.kept[key].pidfd):
            os.close(self.kept.pop(key).pidfd)
            return False
        return True

    def take_up(self, key: Hashable) -> bool:
        """Make a new worker from the kept copy of ``key`` (the worker quits first; a parked family is no longer
        parked); False: no such copy, the worker is unchanged.  ModuleError, with the family ended, when the copy
        or the worker it forks dies before answering, or no answer comes within :data:`TAKE_UP_TIMEOUT_S`."""
        if not self.keeps(key):
            return False
        try:
            self._quit_worker()
            copy = self.kept[key].pidfd
            signal.pidfd_send_signal(copy, signal.SIGUSR1)
            deadline = time.monotonic() + TAKE_UP_TIMEOUT_S
            spawned = self._receive("restore", lambda: not _exited(copy), deadline)
            try:
                worker = os.pidfd_open(spawned)
            except ProcessLookupError:
                raise ModuleError(f"{self._label}: the worker forked by the kept copy died during 'restore'") from None
            try:
                taken = self._receive("restore", lambda: not _exited(worker), deadline)
            except ModuleError:
                _kill(worker)                 # one that hangs ends now, not when it wakes
                raise
            os.close(worker)
            return taken
        except ModuleError:
            self.close(wait=False)
            raise

    def release(self) -> None:
        """The module is done with the family: parked in this process while it keeps copies (:func:`adopt`),
        for at most ``parked_for_s``, else ended."""
        if not self.kept or self._keeper.poll() is not None:
            self.close()
            return
        try:
            self._quit_worker()
        except ModuleError:
            self.close()
            return
        with _parked_lock:
            _parked.append(self)
            ended = _parked[:-PARKED_FAMILIES]
            del _parked[:-PARKED_FAMILIES]
        for family in ended:
            family.close()
        log.info("%s: the run stopped; its worker's %d kept copies wait in this site's process for a resume (frozen "
                 "child processes, pids %s; their memory), %s at most (resume.kept_copies_s)", self._label,
                 len(self.kept), ", ".join(str(kept.pid) for kept in self.kept.values()),
                 f"{self._parked_for_s:g} s" if self._parked_for_s < float("inf") else "until it exits")
        if self._parked_for_s < float("inf"):
            self._expiry = threading.Timer(self._parked_for_s, _expire, (self,))
            self._expiry.daemon = True
            self._expiry.start()

    def close(self, wait: bool = True) -> None:
        """End the worker, every snapshot and every kept copy (idempotent); ``wait=False``: return at once, the
        keeper is reaped later (a restore does not wait for a family it no longer needs to exit)."""
        if self._lifeline < 0:
            return
        if self._expiry is not None:
            self._expiry.cancel()
        while self.kept:
            _kill(self.kept.popitem()[1].pidfd)
        if self._keeper.poll() is None:
            try:
                write_message(self._requests, ("quit",))
            except OSError:
                pass
        os.close(self._lifeline)
        self._lifeline = -1
        for stream in (self._keeper.stdin, self._keeper.stdout):
            if stream is not None:
                stream.close()
        if not wait:
            _ending.append(self._keeper)
            return
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
        self._read_pending()
        return self._receive(request[0], (lambda: True) if handing_over else lambda: _alive(self._worker_pid))

    def _read_pending(self) -> None:
        while self._pending:
            self._pending -= 1
            self._receive("commit", lambda: _alive(self._worker_pid))

    def _quit_worker(self) -> None:
        """End the worker (its snapshot too): it reads no request after answering the quit."""
        if self._worker_pid:
            self._call(("quit",))
            self._worker_pid = 0

    def _receive(self, what: str, alive: Callable[[], bool], deadline: float = float("inf")) -> Any:
        """The answer to ``what``; ModuleError when the family, or what ``alive`` watches, is gone first, or at
        ``deadline`` (time.monotonic(), s)."""
        while not select.select([self._answers], [], [], min(LIVENESS_CHECK_S,
                                                             max(deadline - time.monotonic(), 0.0)))[0]:
            if self._keeper.poll() is not None or not alive():
                raise ModuleError(f"{self._label}: the OpenSees worker process died during {what!r}")
            if time.monotonic() >= deadline:
                raise ModuleError(f"{self._label}: the OpenSees worker process did not answer {what!r} within "
                                  f"{TAKE_UP_TIMEOUT_S:g} s")
        answer = read_message(self._answers)
        if answer is None:
            raise ModuleError(f"{self._label}: the OpenSees worker process ended during {what!r}")
        self._worker_pid, error, result = answer
        if error:
            raise ModuleError(error)
        return result


def adopt(key: Hashable, spec: object, own: ForkedModel) -> ForkedModel | None:
    """The family that keeps a live copy of the checkpoint ``key``: ``own``, else a family of the model ``spec``
    parked in this process (no longer parked: the caller takes it up or closes it), else None."""
    if own.keeps(key):
        return own
    with _parked_lock:
        family = next((f for f in _parked if f.spec == spec and f.keeps(key)), None)
        if family is not None:
            _parked.remove(family)
            if family._expiry is not None:
                family._expiry.cancel()
    return family


def end_parked(which: Callable[[Hashable], bool] = lambda key: True) -> None:
    """End every parked family that keeps a copy of a checkpoint ``which`` accepts (default: every family, what
    a restart of this process would do)."""
    with _parked_lock:
        ended = [family for family in _parked if any(which(key) for key in family.kept)]
        _parked[:] = [family for family in _parked if family not in ended]
    for family in ended:
        family.close()


def _expire(family: ForkedModel) -> None:
    """End ``family`` if it is still parked (its ``parked_for_s`` has passed)."""
    with _parked_lock:
        if family not in _parked:
            return
        _parked.remove(family)
    log.info("%s: the kept copies of a stopped run were ended after %g s parked (resume.kept_copies_s); a resume "
             "now replays the committed path", family._label, family._parked_for_s)
    family.close()


@functools.cache
def pidfds_available() -> bool:
    """Whether this kernel has pidfd_open (Linux 5.3): without it no copy is kept, a restore replays the path."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError as exc:
        print(f"opensees module: no kept copies for restores on this kernel (pidfd_open: {exc}); a restore will "
              "replay the committed path", file=sys.stderr)
        return False
    return True


def _exited(pidfd: int) -> bool:
    return bool(select.select([pidfd], [], [], 0)[0])


def _kill(pidfd: int) -> None:
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.close(pidfd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
