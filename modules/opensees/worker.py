"""The worker process of a path-dependent OpenSees model and its frozen copy (see :mod:`.forked`).

``python -m hybridsim.modules.opensees.worker FD`` (FD: the read end of the
module's lifeline) starts the *keeper*, which forks the *worker*.  The worker
reads requests on stdin and answers on the stdout it was given (OpenSees' own
output goes to stderr).  Requests: ``("build", spec, label)``,
``("impose", target, increments)``, ``("commit", snapshot)``, ``("discard",)``,
``("replay", targets, increments)``, ``("keep",)``, ``("quit",)``; answers: ``(pid, error, result)``.

After answering a build or a replay the worker forks its *snapshot*: a copy
of the state that waits on a pipe.  A commit that asks for one (an iterating
scheme's) does not fork at once: it adds the step to the *tail*, the
committed impositions since the snapshot, and forks a new snapshot only when
replaying the tail would take more CPU time than ``TAIL_BUDGET_S``.  A discard sends
the tail to the snapshot and exits; the snapshot imposes the tail again (the
same calls on the same state: the same state to the bit), answers the
discard, forks a snapshot of its own and is the worker from then on.  So a
scheme whose steps mostly end at their first trial forks about once per
budget's worth of steps, not at every commit.  A commit that asks for no
snapshot (a scheme that has not discarded) kills it and forks nothing; a
later discard is then answered ``False`` (the module rebuilds).

A keep (at a checkpoint; the worker is at the committed state) forks a *kept
copy* and answers its pid.  The copy waits for SIGUSR1, which the module
sends (through a pidfd) once the worker has quit; at each it forks a new
worker, answers that worker's pid (so that the module can tell when it dies
before answering), and waits again; the new worker then answers ``True`` and
forks its snapshot: a checkpoint's state is taken up as often as it is
restored.  The module kills the copies it no longer keeps; the lifeline ends
them with the family.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import time
from typing import Any

import numpy as np

from hybridsim.modules.opensees.forked import read_message, write_message
from hybridsim.wire.contract import ModuleError

PR_SET_CHILD_SUBREAPER = 36
TAKE_UP_DELAY_ENV = "HYBRIDSIM_OPENSEES_TEST_TAKE_UP_DELAY_S"
"""test hook: seconds a worker forked by a kept copy waits before it answers the restore (a test kills it, or
outwaits the module, in that time)"""
_LIBC = ctypes.PyDLL(None, use_errno=True)
"""the C library, called with the GIL held (PyDLL), for :func:`_fork`"""
TAIL_BUDGET_S = 0.005
"""the most imposing CPU time (s) a discard replays before the snapshot is renewed: about what a fork of a
60 MB worker and the copy-on-write faults after it cost here (docs/opensees.md)"""


def _fork() -> int:
    """fork(2) without CPython's after-fork work in the child: 0 in the child, the child's pid in the parent.

    A discard hands over to the snapshot, a child, which forks the next snapshot: the worker is a line of
    processes one generation per discard.  ``os.fork()`` gives every child new interpreter locks and leaks
    the old ones on purpose (CPython's ``_PyThread_at_fork_reinit``: a lock another thread held at the fork
    cannot be freed), about 0.4 KB per generation that every later generation inherits: 12 MB per 100,000
    newmark steps of a Steel01 spring (benchmarks/long_run.py).  The worker runs one thread, so no lock is
    held at the fork and nothing needs re-creating, and it uses none of the at-fork hooks' state (``random``'s
    seed, ``threading``'s bookkeeping)."""
    pid = _LIBC.fork()
    if pid < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"fork: {os.strerror(code)}")
    return pid


class _Worker:
    """Serves one module: requests on fd 0, answers on ``answers``."""

    def __init__(self, lifeline: int, answers: int) -> None:
        self._lifeline = lifeline
        self._answers = answers
        self._model: Any = None
        self._snapshot_pid = 0
        self._to_snapshot = -1
        self._imposed: tuple[np.ndarray, int, float] | None = None
        """the last imposition: target, increments and its CPU time (s)"""
        self._tail: list[tuple[np.ndarray, int]] = []
        """the committed impositions since the snapshot was forked, in order"""
        self._tail_s = 0.0
        """their imposing CPU time (s)"""

    def serve(self) -> None:
        while True:
            request = read_message(0)
            if request is None or request[0] == "quit":
                if request is not None:
                    self._answer(None)        # the last thing it does: the module may hand fd 0 to another
                self._drop_snapshot()
                os._exit(0)
            restored = False
            if request[0] == "keep":
                restored = self._keep()       # True in a worker a kept copy forked: it answers the restore
                if restored:
                    self._answer(True)
            else:
                try:
                    result = getattr(self, "_" + request[0])(*request[1:])
                except ModuleError as exc:
                    self._answer(None, str(exc))
                    continue
                self._answer(result)
            commit = request[0] == "commit"
            if commit and not request[1]:
                self._drop_snapshot()         # the old copy is no longer the committed state
            elif restored or request[0] in ("build", "replay") or commit and not self._extend_tail():
                while (tail := self._snapshot()) is not None:  # in the snapshot, promoted later: it imposes
                    self._answer(*self._take_over(tail))       # the tail, answers the discard, forks its own

    def _answer(self, result: object, error: str = "") -> None:
        try:
            write_message(self._answers, (os.getpid(), error, result))
        except BrokenPipeError:   # the module closed without reading (a commit's answer at its close)
            self._drop_snapshot()
            os._exit(0)

    # -- requests
    def _build(self, spec: Any, label: str) -> None:
        from hybridsim.modules.opensees import domain
        from hybridsim.modules.opensees.built import BuiltModel
        self._model = BuiltModel(spec, domain.load_builder(spec.model), label)

    def _impose(self, target: np.ndarray, increments: int) -> tuple[bool, str, np.ndarray, np.ndarray]:
        start = time.process_time()
        converged = self._model.impose(target, increments)
        self._imposed = (target, increments, time.process_time() - start)
        return (converged, "" if converged else self._model.last_failure, *self._model.reached())

    def _commit(self, snapshot: bool) -> None:
        """Nothing before the answer: the snapshot is forked after it (see :meth:`serve`)."""

    def _replay(self, targets: np.ndarray, increments: np.ndarray) -> None:
        for target, n in zip(targets, increments):
            if not self._model.impose(target, int(n)):
                raise ModuleError(f"{self._model.label}: replaying the committed path failed "
                                  f"({self._model.last_failure})")

    def _keep(self) -> bool:
        """Fork a kept copy of the state now and answer its pid.  The copy waits for SIGUSR1 (or the lifeline's
        end) and forks a new worker at each; True in such a worker (it answers the restore), False here."""
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})    # until the copy can take it
        pid = _fork()
        if pid:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
            self._answer(pid)
            return False
        if self._snapshot_pid:                # the worker's snapshot is not the copy's to hand over to or kill
            os.close(self._to_snapshot)
            self._snapshot_pid, self._to_snapshot = 0, -1
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_write, False)
        signal.signal(signal.SIGUSR1, lambda signum, frame: None)
        signal.set_wakeup_fd(wake_write)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
        while True:
            if self._lifeline in select.select([wake_read, self._lifeline], [], [])[0]:
                os._exit(0)
            os.read(wake_read, 64)
            go_read, go_write = os.pipe()
            pid = _fork()
            if not pid:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGUSR1, signal.SIG_DFL)
                for fd in (wake_read, wake_write, go_write):
                    os.close(fd)
                os.read(go_read, 1)           # until the copy has named it: its answer comes second
                os.close(go_read)
                time.sleep(float(os.environ.get(TAKE_UP_DELAY_ENV) or 0.0))
                return True
            os.close(go_read)
            self._answer(pid)                 # the module watches this worker until it answers
            os.close(go_write)

    def _discard(self) -> bool:
        if not self._snapshot_pid:
            return False                      # no copy of the committed state: the module rebuilds
        write_message(self._to_snapshot, self._tail)
        os._exit(0)                           # the snapshot imposes the tail and answers

    def _extend_tail(self) -> bool:
        """The step just committed joins the tail when there is a snapshot and the tail stays within its budget
        (True); False: a new snapshot is due."""
        if not self._snapshot_pid or self._imposed is None or self._tail_s + self._imposed[2] > TAIL_BUDGET_S:
            return False
        target, increments, seconds = self._imposed
        self._tail.append((target, increments))
        self._tail_s += seconds
        return True

    # -- the snapshot
    def _snapshot(self) -> list[tuple[np.ndarray, int]] | None:
        """Fork the snapshot of the state now; in it, once promoted to worker, the tail its worker handed over
        (None in the worker)."""
        self._drop_snapshot()
        self._tail, self._tail_s = [], 0.0
        from_worker, to_snapshot = os.pipe()
        pid = _fork()
        if pid:
            os.close(from_worker)
            self._snapshot_pid, self._to_snapshot = pid, to_snapshot
            return None
        os.close(to_snapshot)
        tail = self._wait(from_worker)
        os.close(from_worker)
        return tail

    def _take_over(self, tail: list[tuple[np.ndarray, int]]) -> tuple[object, str]:
        """In a promoted snapshot: impose the tail its worker handed over; the discard's answer and error."""
        try:
            self._replay([target for target, _ in tail], [n for _, n in tail])
        except ModuleError as exc:
            return None, str(exc)
        return True, ""

    def _wait(self, fd: int) -> list[tuple[np.ndarray, int]]:
        """Until the worker's tail arrives on ``fd``; exits when the worker or the module's lifeline is gone."""
        readable = select.select([fd, self._lifeline], [], [])[0]
        tail = None if self._lifeline in readable else read_message(fd)
        if tail is None:
            os._exit(0)
        return tail

    def _drop_snapshot(self) -> None:
        if self._snapshot_pid:
            try:
                os.kill(self._snapshot_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.close(self._to_snapshot)
            self._snapshot_pid, self._to_snapshot = 0, -1


def _keep() -> None:
    """The keeper: subreaper of the family; returns when every process of it has exited."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def main(argv: list[str]) -> int:
    """Entry of ``python -m hybridsim.modules.opensees.worker LIFELINE_FD``."""
    lifeline = int(argv[1])
    if _LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(f"opensees worker: prctl(PR_SET_CHILD_SUBREAPER) failed: errno {ctypes.get_errno()}", file=sys.stderr)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # inherited by the family: the kernel reaps its children
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # a terminal's Ctrl-C is the module's to handle; it ends us
    if os.fork():
        os.close(lifeline)
        _keep()
        return 0
    answers = os.dup(1)
    os.dup2(2, 1)  # whatever OpenSees prints goes to stderr, never into the answers
    _Worker(lifeline, answers).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
