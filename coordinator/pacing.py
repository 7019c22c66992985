"""Real-time pacing of the step loop to the wall clock, a site clock's figures in a line, and a progress bar for
the terminal."""

from __future__ import annotations

import contextlib
import gc
import sys
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hybridsim.coordinator.recorder.pacing import WriterPacing

SWITCH_INTERVAL_S = 2e-4
"""Python's thread switch interval during a real-time loop (default 5 ms): how long the step loop may wait
for the GIL while another thread of the coordinator (the module threads) holds it"""


class Pacer:
    """Real-time pacing: step k is issued at t_0 + k dt of the wall clock and is late if it ends after its slot.

    A late step is counted, never hidden (like Simulink's missed ticks); the
    next step is then issued at once, and the clock is not reset, so lateness
    accumulates honestly into the following slots.  A hold restarts the
    clock when the test resumes (:meth:`resync`).  ``writer``: the results writer's pacing, told each time the
    loop is about to sleep (the writer works only in the loop's sleep).
    """

    def __init__(self, dt: float, writer: WriterPacing | None = None) -> None:
        self.dt = dt
        self.slot = 0
        self.late = 0
        self.max_lateness_s = 0.0
        self.slot_start = 0.0
        """wall time (s) the current step's slot began"""
        self.writer = writer
        self._origin: float | None = None

    def resync(self) -> None:
        """Start the clock again at the next step (the first one, or after a hold)."""
        self._origin = None

    def wait(self) -> float:
        """Sleep until this step's slot begins; the wall time it was issued (s)."""
        now = time.perf_counter()
        if self._origin is None:
            self._origin, self.slot = now, 0
        begin = self.slot_start = self._origin + self.slot * self.dt
        if self.writer is not None and begin > now:
            self.writer.sleeping(now, begin)
            now = time.perf_counter()
        if begin > now:
            time.sleep(begin - now)
        return time.perf_counter()

    def done(self, end: float) -> float:
        """The step's work ended at wall time ``end`` (s): count it late if past the end of its slot; its
        lateness (s, <= 0 when on time).

        ``end`` is after everything the coordinator does for the step (recording, listeners, progress
        included): all of it must fit in the slot for the next step to be issued on time.
        """
        self.slot += 1
        lateness = end - (self._origin + self.slot * self.dt)  # type: ignore[operator]
        if lateness > 0:
            self.late += 1
            self.max_lateness_s = max(self.max_lateness_s, lateness)
        return lateness


@contextlib.contextmanager
def realtime_process() -> Iterator[None]:
    """The coordinator's process tuned for a paced loop, restored after it.

    - the thread switch interval is :data:`SWITCH_INTERVAL_S`: with the default 5 ms a step whose module
      reply arrives while another thread of the coordinator holds the GIL waits up to 5 ms (5 slots at
      1024 Hz; the results writer is a process of its own, see :class:`hybridsim.coordinator.recorder.Recorder`);
    - the objects that exist when the loop starts (the modules, the model, the window: all long-lived)
      are frozen out of the garbage collector (``gc.freeze``), so a collection, of the oldest generation
      too, scans only what the loop allocated (cycles made by the loop are still collected).
    """
    interval = sys.getswitchinterval()
    gc.collect()
    gc.freeze()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
        gc.unfreeze()


def format_site_clock(name: str, stats: dict[str, float]) -> str:
    """One line of a site's own clock: its slowed steps and held samples, mean step over target, lateness."""
    steps, samples = max(stats["clock_steps"], 1.0), max(stats["clock_samples"], 1.0)
    return (f"site {name} on its own clock: {stats['clock_slowed_steps']:.0f} slowed steps "
            f"({100 * stats['clock_slowed_steps'] / steps:.2f} %), {stats['clock_held_samples']:.0f} held samples "
            f"({100 * stats['clock_held_samples'] / samples:.2f} %), mean step {1e3 * stats['clock_mean_step_s']:.3f} "
            f"ms for {1e3 * stats['clock_target_step_s']:.3f} ms; sample lateness p50 "
            f"{stats.get('clock_lateness_p50_us', 0.0):.0f} us, p99 {stats.get('clock_lateness_p99_us', 0.0):.0f} us, "
            f"max {stats.get('clock_lateness_max_us', 0.0):.0f} us")


def format_counters(name: str, counters: Mapping[str, float]) -> str:
    """A site clock's live event counters in a few words: ``site lab: 2 slowed steps, 15 held, 40 late samples``."""
    words = [f"{counters[key]:.0f} {label}" for key, label in
             (("clock_slowed_steps", "slowed steps"), ("clock_held_samples", "held"),
              ("clock_late_samples", "late samples")) if key in counters]
    return f"site {name}: {', '.join(words)}"


class ProgressBar:
    """A one-line progress bar on a stream (stderr), redrawn at most ten times a second.

    On a stream that is not a terminal (a log file, CI) it writes a plain line at most every ``log_every_s``
    seconds instead of redrawing; ``end()`` finishes a line left open by a run that stopped early.
    """

    def __init__(self, stream: Any = sys.stderr, width: int = 30, log_every_s: float = 10.0) -> None:
        self.stream, self.width, self._last = stream, width, 0.0
        self._counters: Mapping[str, Mapping[str, float]] = {}
        self._start = time.perf_counter()
        self._terminal = bool(getattr(stream, "isatty", lambda: False)())
        self._every_s = 0.1 if self._terminal else log_every_s
        self._open = False
        self._done = self._drawn = self._total = 0
        """the steps of the last call, of the last line drawn, and the total"""
        self._note = ""
        """what holds the run, said at the line's end ("results writer stalled for 3 s"; "": nothing)"""

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        self._done, self._total = done, total
        if done == self._drawn or done < total and now - self._last < self._every_s:
            return
        self._draw(done, total, now)

    def _draw(self, done: int, total: int, now: float) -> None:
        self._last, self._drawn = now, done
        filled = int(self.width * done / max(total, 1))
        rate = done / max(now - self._start, 1e-9)
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} steps, {rate:,.0f} steps/s"
        line += "".join(f"; {format_counters(name, values)}" for name, values in self._counters.items())
        line += f"; {self._note}" if self._note else ""
        if self._terminal:
            self.stream.write(f"\r{line}" + ("\n" if done == total else ""))
            self._open = done < total
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """Say ``text`` at the line's end now, until another note ("": none); on a log, one line each."""
        self._note = text
        self._draw(self._done, self._total, time.perf_counter())

    def watch(self, n: int, arrays: Any) -> None:
        """A step listener (``run_experiment(listeners=[bar.watch])``): the line also shows the modules' event
        counters as the run's window holds them (a site on its own clock: slowed steps, held and late samples)."""
        self._counters = arrays.counters

    def end(self) -> None:
        """After a run that stopped before its last step: the line shows the steps of the last call (the run
        makes it with the steps its results file holds), and it is ended, so the next message starts clean."""
        if self._done != self._drawn:
            self._draw(self._done, self._total, time.perf_counter())
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
