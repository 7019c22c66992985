"""When a real-time run's results writer may work: the one policy, asked by the run loop, the coordinator's
client and the writer process.

The writer process costs the loop no time of its own, but on a 2-vCPU VM the steps whose daemons woke while it
wrote were late far more often (a block of 1024 rows written at once, about 4 ms of the writer's CPU at
SCHED_IDLE: late episodes started in 112-158 of 1000 steps a write overlapped, against 3 per 1000 outside; the
writing itself, not the file system: tmpfs the same).  So in a paced run the writer works only in the loop's
sleep, a **piece** at a time (a dataset's new rows, a flush, the row count and its flush):

- the loop, about to sleep until its next slot, asks :meth:`WriterPacing.until` "may the writer work now, until
  when": until the slot when at least :data:`IDLE_S` of sleep is left, and then gives the writer a
  :class:`Grant` through its client (:meth:`hybridsim.coordinator.recorder.client.Recorder.collect`);
- the writer starts a piece only while :meth:`Grant.may_start`: :data:`PIECE_S` before the grant's end
  (:data:`WARM_PIECE_S` for a piece right after another), on the core the grant names (the one the loop leaves);
- where the sleeps are too short, it degrades in two counted steps: :data:`BEHIND_ROWS` behind it starts pieces to
  the end of each grant; :data:`DEFERRED_ROWS` behind it writes beside the loop; a window behind, the loop waits.

Every figure below was measured with ``python benchmarks/long_run.py --seconds 0 --realtime-s 60
--newmark-repeats 0 --marths-newmark-s 0`` (a linear and a spring daemon at 1024 Hz for 60 s) on a 2-vCPU VM,
load 0.6-0.9 (docs/step_loop.md); they are a machine's figures, kept here with how they were found.
"""

from __future__ import annotations

import struct
from typing import NamedTuple, Protocol

IDLE_S = 6e-4
"""the sleep a real-time loop must have left before it lets its writer work in it (s): the client's part of a
grant (take the replies and observe the rows written: 0.1-0.5 ms on a core that was idle; or copy and send the
rows due: about 0.25 ms) must end before the slot does"""

PIECE_S = 4.5e-4
"""the time a paced writer keeps for a piece of work (s): it starts one only if the grant lasts that much longer.
A piece takes 40-80 us on a core that has been running, 250-500 us (p90) on one that has just woken up"""

WARM_PIECE_S = 1.5e-4
"""the time kept for a piece that follows another at once (s): on a core already running, pieces take 40-80 us"""

WARM_GAP_S = 1e-4
"""how soon after a piece the next one counts as following it (s): well under the 1 ms of a 1024 Hz slot, over
the 10-30 us between two pieces of one request"""

BEHIND_ROWS = 2048
"""rows due and not on disk beyond which a paced writer has fallen behind (its loop's sleeps too short for
:data:`PIECE_S`): it then starts pieces until the end of each grant, at the risk of a piece overlapping a step,
rather than make the loop wait for a whole window (:data:`hybridsim.coordinator.window.WINDOW_ROWS`, 8192): a
quarter of it, two blocks of rows"""

DEFERRED_ROWS = 4096
"""rows a paced run's writer may be behind at most before it writes beside the loop (a loop that never sleeps
long enough for it): half the window, so that the loop never waits for a whole window to be written"""

FREE = float("inf")
"""a grant without end: the writer does all the requests it covers, on any core"""


class Grant(NamedTuple):
    """What a paced writer may do: start pieces until wall time ``until`` (s, ``time.perf_counter``) less
    ``reserve`` (s), on requests numbered up to ``through``, on ``core`` (-1: any)."""

    until: float
    reserve: float
    through: int
    core: int

    def pack(self) -> bytes:
        return _GRANT.pack(*self)

    @classmethod
    def unpack(cls, data: bytes) -> "Grant":
        return cls(*_GRANT.unpack(data))

    @classmethod
    def of(cls, until: float, behind: int, through: int, core: int) -> "Grant":
        """The grant of a sleep until ``until`` to a writer ``behind`` rows behind: it keeps :data:`PIECE_S` for
        a piece unless it has fallen :data:`BEHIND_ROWS` behind (then none); a grant without end on any core."""
        return cls(until, 0.0 if behind >= BEHIND_ROWS else PIECE_S, through, core if until != FREE else -1)

    def may_start(self, request: int, now: float, last_ended: float) -> bool:
        """(writer) Whether a piece of request number ``request`` may start at ``now``, the last piece having
        ended at ``last_ended`` (wall times, s)."""
        reserve = min(self.reserve, WARM_PIECE_S) if now - last_ended < WARM_GAP_S else self.reserve
        return request <= self.through and now + reserve < self.until


NO_GRANT = Grant(0.0, 0.0, 0, -1)
"""what a paced writer has before its first grant: nothing"""

_GRANT = struct.Struct("ddqq")
"""a grant on the pipe: one write of less than PIPE_BUF bytes, all of it or none"""


def hurried(behind: int) -> bool:
    """Whether a paced writer ``behind`` rows behind starts pieces to the end of each grant."""
    return behind >= BEHIND_ROWS


def beside_loop(behind: int) -> bool:
    """Whether a paced writer ``behind`` rows behind is let write beside the loop (the loop has not slept enough)."""
    return behind >= DEFERRED_ROWS


class PacedWriter(Protocol):
    """What the policy drives: the coordinator's client of the writer process."""

    def collect(self, until: float) -> None: ...

    def let_write(self) -> None: ...


class WriterPacing:
    """The run loop's one question about its writer, and the two moments it asks it.

    :meth:`sleeping`: the loop is about to sleep until ``slot`` (its next step's slot): if :meth:`until`
    allows, the writer's replies are taken, the rows due sent, and the writer granted the sleep.
    :meth:`holding`: the loop is held (an operator's hold): the writer may do all it has been sent.
    """

    def __init__(self, writer: PacedWriter) -> None:
        self.writer = writer

    @staticmethod
    def until(now: float, slot: float) -> float | None:
        """May the writer work now, until when: until ``slot`` if the loop sleeps at least :data:`IDLE_S` from
        ``now`` (wall times, s), else not now (None)."""
        return slot if slot - now > IDLE_S else None

    def sleeping(self, now: float, slot: float) -> None:
        """The loop sleeps from ``now`` until ``slot``: the writer works in that sleep if :meth:`until` allows."""
        until = self.until(now, slot)
        if until is not None:
            self.writer.collect(until)

    def holding(self) -> None:
        """The loop is held: the writer may write all it has been sent, on any core, without the loop waiting."""
        self.writer.let_write()
