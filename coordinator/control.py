"""Operator control of a running test from another thread: hold, resume, abort; and step listeners.

The step loop calls :meth:`RunControl.gate` before it issues each step.
While the test is held the loop waits there: no new command goes to any
site, so every actuator keeps its last (committed) command.  An abort ends
the run cleanly after the last completed step; the results file is complete
up to it.  Listeners are called with the index of every completed step and the
run's window of rows (:class:`hybridsim.coordinator.window.WindowView`: the last
rows, indexed by absolute row; rows up to that index are final) and must return at
once (a monitor keeps the index and reads the arrays on its own thread), so
a slow observer never slows the test.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

import numpy as np

StepListener = Callable[[int, Mapping[str, np.ndarray]], None]
"""called with the index n of a completed step and the run's window of rows (rows up to n are final; the
oldest kept is ``arrays.first``)"""


class RunAborted(Exception):
    """The operator aborted the run."""


class RunControl:
    def __init__(self) -> None:
        self._running = threading.Event()
        self._running.set()
        self._lock = threading.Lock()
        self._abort_reason: str | None = None
        self.held = False
        self.holds = 0
        """how many times the run was held (a real-time clock restarts after each)"""
        self.notice = ""
        """what holds the run besides an operator, in a few words ("results writer stalled for 3 s"; "": nothing)"""

    def hold(self) -> None:
        """Stop issuing steps after the current one; sites keep their last command."""
        with self._lock:
            self.held = True
            self.holds += 1
            self._running.clear()

    def resume(self) -> None:
        with self._lock:
            self.held = False
            self._running.set()

    def abort(self, reason: str = "aborted by the operator") -> None:
        """End the run after the current step (also releases a hold)."""
        with self._lock:
            self._abort_reason = reason
            self._running.set()

    @property
    def aborted(self) -> bool:
        return self._abort_reason is not None

    def gate(self, on_hold: Callable[[], object] | None = None) -> None:
        """Block while held (calling ``on_hold`` first); raise RunAborted once aborted."""
        if on_hold is not None and not self._running.is_set():
            on_hold()
        self._running.wait()
        if self._abort_reason is not None:
            raise RunAborted(self._abort_reason)
