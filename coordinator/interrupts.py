"""SIGINT and SIGTERM end a run alike, once: the first raises :class:`Interrupted` in the main thread (the
run's cleanup then closes every site session, writes the completed rows and the status); later ones are
ignored, so a second Ctrl-C or a repeated SIGTERM cannot cut the cleanup short.

The local daemons a coordinator starts run in their own session (hybridsim.wire.daemons), so a
terminal's Ctrl-C, which goes to the whole foreground process group, reaches only the coordinator;
the coordinator closes their sessions and stops them.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal; ``signum`` is which (the exit code is 130 for either)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def interrupted_once() -> Iterator[None]:
    """Within the block, the first SIGINT or SIGTERM raises Interrupted; later ones only say so on stderr."""
    received: list[int] = []

    def handler(signum: int, frame: object) -> None:
        if received:
            sys.stderr.write(f"{signal.Signals(signum).name} again: still closing the sessions and writing the "
                             "results file\n")
            return
        received.append(signum)
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, handler) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            # after a signal the process is ending: later ones are ignored, at the C level (a Python handler is
            # reset to the default while the interpreter finalizes, and a late Ctrl-C would then kill it)
            signal.signal(sig, old if not received else signal.SIG_IGN)
