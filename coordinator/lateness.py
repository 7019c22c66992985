"""Why real-time steps are late: each late episode named by where its first step's time went.

The pacer (:class:`hybridsim.coordinator.pacing.Pacer`) does not reset its clock after a late step,
so one disturbance of 10 ms makes about ten steps late at 1024 Hz while the loop catches up.  A late
*episode* is a run of consecutive late steps; only its first step was made late by something.  Its
time from the start of its slot to its end splits into the wait to be issued, the compute (issue to
commit at every module) and the coordinator's work after the commit; the largest part names the
cause, unless Python's garbage collector ran longer than all of them inside the slot:

- ``gc``: a collection (``gc.callbacks``; in any thread, it holds the GIL);
- ``wake-up``: the loop was issued late (the operating system ran another process);
- ``modules``: the compute (the daemons, the wire, and the GIL when another thread held it);
- ``results write``: the coordinator's part, in a step that queued a block of rows or a checkpoint;
- ``coordinator``: the coordinator's part (integrator, listeners) in any other step.

A results write in the writer process runs in the loop's sleep, a piece at a time (see
:meth:`hybridsim.coordinator.recorder.Recorder.collect`), and a piece may still outlast the sleep;
whether writes make steps late is measured by comparison: the rate of late episodes starting in steps
whose slot a write overlapped (before the slot's end: a write after it cannot have made the step late)
against steps that none did (``rate_during_writes`` vs ``rate_outside_writes``, per 1000 steps), and the
same for collections.  Memory is bounded: counts, and the first :data:`KEPT_EPISODES` episodes in full.
"""

from __future__ import annotations

import gc
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

CAUSES = ("gc", "results write", "wake-up", "modules", "coordinator")
KEPT_EPISODES = 200
"""late episodes kept with their step, lateness and cause (the counts cover all)"""
INTERVALS = 256
"""recent GC and writer intervals kept for the overlap test"""


class Intervals:
    """The last :data:`INTERVALS` (start, end) wall-clock intervals (s) of an activity, and its total time."""

    def __init__(self) -> None:
        self.spans: deque[tuple[float, float]] = deque(maxlen=INTERVALS)
        self.total_s = 0.0
        self.count = 0
        self._since: float | None = None

    def begin(self) -> None:
        self._since = time.perf_counter()

    def end(self) -> None:
        if self._since is not None:
            now = time.perf_counter()
            self.spans.append((self._since, now))
            self.total_s += now - self._since
            self.count += 1
            self._since = None

    def overlap_s(self, start: float, stop: float) -> float:
        """How long the activity ran within ``start .. stop`` (s; a running one counts up to ``stop``)."""
        spans = [(self._since, stop)] if self._since is not None else []
        for a, b in reversed(self.spans):
            if b <= start:
                break
            spans.append((a, b))
        return sum(max(0.0, min(b, stop) - max(a, start)) for a, b in spans)


class LateCauses:
    """Attribution of a real-time run's late episodes (see the module docstring); ``writer`` is the
    results writer's activity (:attr:`hybridsim.coordinator.recorder.Recorder.activity`), ``writer_counts`` its
    counters (:meth:`hybridsim.coordinator.recorder.Recorder.counts`: the loop waited for it, it fell behind)."""

    def __init__(self, dt: float, writer: Intervals,
                 writer_counts: Callable[[], Mapping[str, int]] = lambda: {}) -> None:
        self.dt = dt
        self.writer = writer
        self._writer_counts = writer_counts
        self.loop_writer_counts: dict[str, int] = {}
        """the writer's counts over the loop (``writer_counts()`` at its end less at its start)"""
        self._counts_before: Mapping[str, int] = {}
        self.collections = Intervals()
        self.counts = dict.fromkeys(CAUSES, 0)
        self.late_steps = dict.fromkeys(CAUSES, 0)
        self.episodes: list[dict[str, Any]] = []
        self.eligible = [0, 0]
        """steps that could start an episode (the step before was on time), [outside, during] a write"""
        self.started = [0, 0]
        """episodes started, [outside, during] a write"""
        self.eligible_gc, self.started_gc = [0, 0], [0, 0]
        """the same, [outside, during] a collection"""
        self._cause: str | None = None
        self._gc_callback: Callable[[str, dict[str, Any]], None] | None = None

    def __enter__(self) -> "LateCauses":
        self._counts_before = self._writer_counts()
        def on_gc(phase: str, _info: dict[str, Any]) -> None:
            (self.collections.begin if phase == "start" else self.collections.end)()

        self._gc_callback = on_gc
        gc.callbacks.append(on_gc)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.loop_writer_counts = {k: v - self._counts_before.get(k, 0) for k, v in self._writer_counts().items()}
        if self._gc_callback in gc.callbacks:
            gc.callbacks.remove(self._gc_callback)

    def step(self, n: int, slot_start: float, issued: float, committed: float, end: float, lateness: float,
             queued: bool) -> None:
        """Step n's slot began at ``slot_start``; it was issued, committed at every module and ended at
        those wall times (s); ``lateness`` (s) past its slot (<= 0: on time); ``queued``: it queued rows
        or a checkpoint for the writer."""
        if self._cause is not None:  # inside an episode: catching up, not a new disturbance
            if lateness > 0:
                self.late_steps[self._cause] += 1
                return
            self._cause = None
            return
        writing = self.writer.overlap_s(slot_start, min(end, slot_start + self.dt)) > 0  # (after, it was late already)
        collecting = self.collections.overlap_s(slot_start, end)
        self.eligible[writing] += 1
        self.eligible_gc[collecting > 0] += 1
        if lateness <= 0:
            return
        self.started[writing] += 1
        self.started_gc[collecting > 0] += 1
        parts = {"wake-up": issued - slot_start, "modules": committed - issued,
                 "results write" if queued else "coordinator": end - committed}
        cause = max(parts, key=parts.__getitem__)
        if collecting > parts[cause]:
            cause = "gc"
        self._cause = cause
        self.counts[cause] += 1
        self.late_steps[cause] += 1
        if len(self.episodes) < KEPT_EPISODES:
            self.episodes.append({"step": n, "cause": cause, "lateness_us": 1e6 * lateness,
                                  **{f"{k}_us": 1e6 * v for k, v in parts.items()}, "gc_us": 1e6 * collecting,
                                  "during_write": writing, "queued": queued})

    def summary(self, loop_wall_s: float) -> dict[str, Any]:
        """Episodes and late steps per cause; the share of the loop's wall time the writer and GC were busy."""
        def rate(started: list[int], eligible: list[int], i: int) -> float:
            return 1000.0 * started[i] / eligible[i] if eligible[i] else 0.0

        return {"episodes": dict(self.counts), "late_steps": dict(self.late_steps),
                "rate_during_writes": rate(self.started, self.eligible, 1),
                "rate_outside_writes": rate(self.started, self.eligible, 0),
                "steps_during_writes": self.eligible[1],
                "episodes_during_writes": self.started[1],
                **self.loop_writer_counts,
                "rate_during_gc": rate(self.started_gc, self.eligible_gc, 1),
                "rate_outside_gc": rate(self.started_gc, self.eligible_gc, 0),
                "writer_busy_pct": 100.0 * self.writer.total_s / loop_wall_s if loop_wall_s > 0 else 0.0,
                "writer_writes": self.writer.count,
                "gc_busy_pct": 100.0 * self.collections.total_s / loop_wall_s if loop_wall_s > 0 else 0.0,
                "gc_collections": self.collections.count,
                "first_episodes": self.episodes[:20]}
