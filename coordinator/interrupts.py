"""SIGINT and SIGTERM end a run alike, once, where it can stop cleanly: between two steps.

The first signal is noted, not raised wherever the main thread happens to be.  An exception raised by a signal
handler can land inside a library's ``with lock:`` after the lock was taken and before the block begins (CPython's
``with`` is not atomic against asynchronous exceptions), and that lock is then held for ever.  Seen in the
container test (2 of 31 runs): a SIGTERM raised inside gRPC's wait for a step's reply left that call's condition
held; the channel's event thread blocked on it, and the run's closing ``Records`` call to the site waited for ever
instead of the coordinator exiting 130.  So the step loop calls :func:`stop_point` between steps, which raises
:class:`Interrupted` there; the run's cleanup then closes every site session and writes the completed rows and the
status.  A run that reaches no stop point within :data:`GRACE_S` (its sessions opening, a step waiting for a slow
site, its closing) is interrupted where it is, as a signal handler that raises would.  Signals after the first
only say so on stderr, so a second Ctrl-C or a repeated SIGTERM cannot cut the cleanup short.

The local daemons a coordinator starts run in their own session (hybridsim.wire.daemons), so a
terminal's Ctrl-C, which goes to the whole foreground process group, reaches only the coordinator;
the coordinator closes their sessions and stops them.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

SIGNALS = (signal.SIGINT, signal.SIGTERM)
GRACE_S = 0.5
"""how long a noted signal waits for a stop point before the run is interrupted where it is (s)"""


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal; ``signum`` is which (the exit code is 130 for either)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _Noted:
    """The stop signal of one :func:`interrupted_once` block."""

    def __init__(self) -> None:
        self.signum: int | None = None
        """the first stop signal (None: none yet)"""
        self.raised = False
        """Interrupted was raised for it"""
        self.forced = False
        """no stop point came within GRACE_S: the next delivery raises where the main thread is"""
        self.pending: Interrupted | None = None
        """the Interrupted raised last (a raise that Python swallowed, in a gc callback, is taken back)"""

    def take(self) -> Interrupted:
        self.raised = True
        self.pending = Interrupted(self.signum)  # type: ignore[arg-type]
        return self.pending


_noted: _Noted | None = None
"""the signal state of the innermost :func:`interrupted_once` block in force"""


def stop_point() -> None:
    """Raise :class:`Interrupted` if a stop signal was noted and not raised yet (the step loop calls this
    between steps; a no-op outside :func:`interrupted_once`)."""
    noted = _noted
    if noted is not None and noted.signum is not None and not noted.raised:
        raise noted.take()


def stop_noted() -> bool:
    """Whether a stop signal was noted (raised or not): a wait that may never end (a stalled results writer) gives
    up then."""
    noted = _noted
    return noted is not None and noted.signum is not None


@contextmanager
def interrupted_once() -> Iterator[None]:
    """Within the block the first SIGINT or SIGTERM raises Interrupted at the next :func:`stop_point` (or after
    :data:`GRACE_S` where the main thread is; or at the block's end if it ends first); later ones only say so
    on stderr.  Enter it in the main thread."""
    global _noted
    noted, outer = _Noted(), _noted
    main = threading.main_thread().ident
    timer: threading.Timer | None = None

    def force() -> None:
        if not noted.raised:
            noted.forced = True
            signal.pthread_kill(main, noted.signum)  # type: ignore[arg-type]  # wakes a blocking call too

    def arm() -> None:
        """Force the noted signal GRACE_S from now unless a stop point raises it first."""
        nonlocal timer
        timer = threading.Timer(GRACE_S, force)
        timer.daemon = True
        timer.start()

    def handler(signum: int, frame: object) -> None:
        if noted.raised:
            sys.stderr.write(f"{signal.Signals(signum).name} again: still closing the sessions and writing the "
                             "results file\n")
        elif noted.signum is None:
            noted.signum = signum
            arm()
        elif noted.forced:
            raise noted.take()

    def swallowed(info: "sys.UnraisableHookArgs") -> None:
        """A forced raise that landed in a gc callback or a finalizer is printed and dropped by Python: the
        signal is noted again (the next stop point raises it, or GRACE_S forces it again), not lost."""
        if noted.pending is not None and info.exc_value is noted.pending:
            noted.raised, noted.pending = False, None
            arm()
        else:
            hook(info)

    hook = sys.unraisablehook
    sys.unraisablehook = swallowed
    previous = {sig: signal.signal(sig, handler) for sig in SIGNALS}
    _noted = noted
    try:
        yield
        if noted.signum is not None and not noted.raised:  # the block ended before a stop point
            raise noted.take()
    finally:
        _noted = outer
        sys.unraisablehook = hook
        if timer is not None:
            timer.cancel()
        for sig, old in previous.items():
            # after a signal the process is ending: later ones are ignored, at the C level (a Python handler is
            # reset to the default while the interpreter finalizes, and a late Ctrl-C would then kill it)
            signal.signal(sig, old if noted.signum is None else signal.SIG_IGN)
