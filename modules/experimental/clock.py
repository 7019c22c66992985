"""The site clock: an experimental site's control loop on the wall clock (``clock = "own"``).

OpenFresco's three-loop architecture (Schellenberg et al., PEER 2009/104): the coordinator's
integration loop sends one target per step Dt; the site's predictor-corrector loop makes a command
every control sample dt on its own clock; the actuators' servo loop (the plant) follows it.  The clock
runs in its own thread (SCHED_FIFO and pinned to a CPU when ``scheduling`` asks and the system
permits), so its timing depends neither on the coordinator's calls nor on the site's gRPC threads.

Test time inside the step is tau in [0, 1]; a normal sample advances it by 1 / M, M = Dt time_scale / dt
samples per step (``time_scale`` > 1: continuous pseudo-dynamic testing, the actuators moving
continuously at the slowed rate).  Every sample (tick k due at t_0 + k dt of the wall clock):

- the new target d_{n+1} has arrived (and, with ``command_generation.arrival`` x, tau has passed
  floor(x M) / M): the corrector, from the last command sent (tau_a, c_a) to d_{n+1} at tau = 1
  (:func:`~hybridsim.modules.experimental.command_generation.corrected`); the step ends at tau = 1
  and its measurement answers the coordinator's ``execute``;
- it has not: the predictor from d_n .. d_{n-p}; the event-driven strategy past shares of the
  step: past ``event_driven.slow`` tau advances by ``rate`` / M (the step is stretched, counted
  as a slowed step), past ``event_driven.hold`` (or at tau = 1) the command is held (a held sample,
  counted) until the target arrives; the corrector then starts from the held command, so a hold never
  jumps.

With one sample per step (M = 1) the target of the step must arrive within the sample before it, or
the sample holds.  A sample is late when its tick starts more than 10 % of dt after it was due; the
clock never skips a sample (the plant gets every one) and never resets its origin, so lateness
accumulates honestly.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Integer, Key, Number, Schema, Table, Text
from hybridsim.modules.experimental.command_generation import corrected, predicted
from hybridsim.modules.rowlog import RowLog
from hybridsim.wire.contract import ModuleError

CLOCKS = ("lockstep", "own")
LATE_SHARE = 0.1
"""a sample is late when its tick starts more than this share of dt after it was due"""
PREDICT, CORRECT, SLOWED, HELD = 0, 1, 2, 3
"""what a sample's command was (records: clock/samples, column mode)"""
COUNTERS = ("clock_slowed_steps", "clock_held_samples", "clock_late_samples")
"""the event-driven counters a site on its own clock reports with every step's result while they change"""

EVENT_DRIVEN = Schema("event_driven", "The event-driven strategy of a site on its own clock while the next "
                      "target is late (shares of the step, test time).", {
                          "slow": Key(Number("", 0, 1, open_minimum=True), "share of the step past which, with "
                                      "no new target, the clock slows (the step is stretched)", default=0.6),
                          "hold": Key(Number("", 0, 1, open_minimum=True), "share of the step past which, with "
                                      "no new target, the actuators hold until it arrives", default=0.9),
                          "rate": Key(Number("", 0, 1, open_minimum=True, open_maximum=True),
                                      "test time per sample while slowed, as a share of the normal", default=0.5),
                      })
SCHEDULING = Schema("scheduling", "How the clock thread asks the operating system for its timing.", {
    "priority": Key(Integer(0, 99), "SCHED_FIFO priority of the clock thread (0: the normal scheduler)", default=0),
    "cpu": Key(Integer(0), "the CPU the clock thread is pinned to (absent: any)"),
    "spin_us": Key(Number("us", 0), "the clock sleeps until this long before a sample is due, then busy-waits",
                   default=200.0),
})
KEYS = {
    "clock": Key(Text(CLOCKS), "lockstep: the site runs its m control samples when stepped; own: on the wall "
                 "clock at its control rate, in its own thread (docs/realtime.md)", default="lockstep"),
    "event_driven": Key(Table(EVENT_DRIVEN), "the thresholds of the event-driven strategy (clock = 'own')"),
    "time_scale": Key(Number("", 1), "test time runs this many times slower than the wall clock: continuous "
                      "pseudo-dynamic testing (clock = 'own')", default=1.0),
    "scheduling": Key(Table(SCHEDULING), "real-time scheduling of the clock thread (clock = 'own')"),
}
"""the experimental site's clock keys"""


@dataclass(frozen=True)
class ClockSettings:
    """What a site's config says of its clock."""

    slow: float = 0.6
    hold: float = 0.9
    rate: float = 0.5
    time_scale: float = 1.0
    priority: int = 0
    cpu: int | None = None
    spin_s: float = 200e-6

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ClockSettings | None:
        """The settings of a site config with ``clock = "own"`` (None: lockstep); refuses the clock's keys
        without it and thresholds out of order."""
        if config.get("clock", "lockstep") != "own":
            given = [key for key in ("event_driven", "time_scale", "scheduling") if key in config]
            if given:
                raise ModuleError(f"experimental module: {given[0]} needs clock = \"own\" (a site on its own clock)")
            return None
        events, scheduling = config.get("event_driven", {}), config.get("scheduling", {})
        settings = cls(float(events.get("slow", 0.6)), float(events.get("hold", 0.9)), float(events.get("rate", 0.5)),
                       float(config.get("time_scale", 1.0)), int(scheduling.get("priority", 0)), scheduling.get("cpu"),
                       float(scheduling.get("spin_us", 200.0)) * 1e-6)
        if settings.slow > settings.hold:
            raise ModuleError(f"experimental module: event_driven.slow ({settings.slow}) must not be past "
                              f"event_driven.hold ({settings.hold})")
        return settings


class _Lateness:
    """Every sample's lateness folded into counts: how many, how many late, the largest, and a histogram of
    logarithmic bins (width 0.1 % of x + 0.01 us) from which the percentiles come; bounded however long the
    run. A bin's value is its centre, so a percentile is within 0.05 % (+ 0.005 us) of the sample's."""

    ORIGIN_US, RATIO = 0.01, 1e-3
    BINS = 25_400
    """up to 1e9 us (a sample 1000 s late) in bins; later samples count in the last bin"""

    def __init__(self, late_us: float) -> None:
        self.late_us = late_us
        self.counts = np.zeros(self.BINS, np.int64)
        self.samples = 0
        self.late = 0
        self.max_us = -math.inf

    def add(self, lateness_us: np.ndarray) -> None:
        if lateness_us.size == 0:
            return
        x = np.maximum(lateness_us, 0.0)
        bins = np.minimum(np.log1p(x / self.ORIGIN_US) / math.log1p(self.RATIO), self.BINS - 1).astype(np.int64)
        self.counts += np.bincount(bins, minlength=self.BINS)
        self.samples += lateness_us.size
        self.late += int(np.count_nonzero(lateness_us > self.late_us))
        self.max_us = max(self.max_us, float(np.max(lateness_us)))

    def percentiles(self, *q: float) -> list[float]:
        """As numpy's (linear between the two nearest ranks), from the bins' centres."""
        cumulative = np.cumsum(self.counts)
        centres = self.ORIGIN_US * np.expm1((np.arange(self.BINS) + 0.5) * math.log1p(self.RATIO))
        out = []
        for share in q:
            rank = (self.samples - 1) * share / 100.0
            below, above = (centres[np.searchsorted(cumulative, r, side="right")] for r in (math.floor(rank),
                                                                                               math.ceil(rank)))
            out.append(float(below + (rank - math.floor(rank)) * (above - below)))
        return out


SAMPLE_COLUMNS = ("lateness_us", "test_time_s", "mode", "busy_us")
STEP_COLUMNS = ("end_sample", "arrival", "held_samples", "slowed", "wall_s")
"""per step: the sample measured at its end (the site's sample index), when its target arrived (share of the
step's wall time after the previous step ended), its held samples, whether it was slowed, its wall time (s)"""


class SiteClock:
    """The control loop of one site on the wall clock, one thread, from the first target to :meth:`stop`.

    ``advance(command)`` runs one control sample of the site (interface command -> its response; a held sample
    repeats the command, and the compensators keep compensating it); ``commit()`` is called once a step has
    ended.  Steps are numbered as the coordinator's times:
    step n ends at t_n = n Dt, the clock runs steps ``first`` + 1, .. .
    """

    def __init__(self, advance: Callable[[np.ndarray], Any], commit: Callable[[], None], period: float,
                 samples: int, order: int, predicted_samples: int, settings: ClockSettings) -> None:
        self.advance = advance
        self.commit = commit
        self.period = period
        """dt: the control sample (s of wall clock)"""
        self.samples = samples
        """M: samples per step at the normal rate"""
        self.order = order
        self.predicted_samples = predicted_samples
        """samples of each step commanded from the predictor before a target is used (the `arrival` x: floor(x M))"""
        self.settings = settings
        self.lock = threading.Lock()
        """held while a sample runs: the site's record is read under it"""
        self.sample_log = RowLog(len(SAMPLE_COLUMNS), 4096)
        """row k - 1: sample k (k = 1, 2, ..), held from the first sample not stored yet"""
        self.step_log = RowLog(len(STEP_COLUMNS), 4096)
        """row j: the clock's step j + 1 (its first), held from the first step not stored yet"""
        self._lateness = _Lateness(LATE_SHARE * period * 1e6)
        self._forgotten_steps = np.zeros(len(STEP_COLUMNS))
        """the sums of the forgotten steps' columns (held samples, slowed, wall time: the stats)"""
        self.started_at: float | None = None
        self._ready = threading.Condition()
        self._targets: dict[int, tuple[np.ndarray, float]] = {}
        self._results: dict[int, tuple[Any, dict[str, float]]] = {}
        self.counters = dict.fromkeys(COUNTERS, 0.0)
        """the event-driven counters up to the last step that ended (what :meth:`stats` gives at the end)"""
        self._done = 0
        self._failure: BaseException | None = None
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._switch_interval: float | None = None
        self.scheduled = {"priority": 0.0, "cpu": -1.0}
        """what the operating system granted the clock thread"""
        self._promoted: dict[int, tuple[int, os.sched_param]] = {}

    # -- the module's side ------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None

    @property
    def done(self) -> int:
        """The last step that has ended (its measurement is known)."""
        return self._done

    def start(self, step: int, history: np.ndarray, last_command: np.ndarray) -> None:
        """Start ticking now: the last ended step ``step``, its targets ``history`` (d_n, d_{n-1}, .. rows) and
        the last command sent (interface DOFs)."""
        self._done = step
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch_interval, 50e-6))  # another thread holds the GIL at most 50 us
        self._thread = threading.Thread(target=self._run, args=(np.array(history, float),
                                                                np.array(last_command, float)),
                                        name="site-clock", daemon=True)
        self._thread.start()

    def deliver(self, step: int, target: np.ndarray) -> None:
        """The target of ``step`` has arrived (now)."""
        with self._ready:
            self._targets[step] = (np.array(target, float), time.perf_counter())
            self._ready.notify_all()

    def promote_caller(self) -> None:
        """The calling thread (a connection's, delivering targets) under SCHED_FIFO one below the clock thread
        until :meth:`stop`, as far as the system permits: the machine's other work does not keep a target
        waiting (with ``scheduling.priority`` > 1)."""
        tid = threading.get_native_id()
        if self.settings.priority > 1 and tid not in self._promoted:
            self._promoted[tid] = (os.sched_getscheduler(tid), os.sched_getparam(tid))
            with _permitted():
                os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(self.settings.priority - 1))

    def result(self, step: int, timeout_s: float) -> tuple[Any, dict[str, float]]:
        """The site's response at the end of ``step``, once the clock has run it, and the counters then."""
        deadline = time.perf_counter() + timeout_s
        with self._ready:
            while step not in self._results and self._failure is None:
                left = deadline - time.perf_counter()
                if left <= 0 or self._thread is None:
                    raise ModuleError(f"experimental module: the site clock did not end step {step} within "
                                      f"{timeout_s:g} s")
                self._ready.wait(left)
            if step in self._results:
                return self._results.pop(step)
            failure = self._failure
        if isinstance(failure, ModuleError):
            raise failure
        raise ModuleError(f"experimental module: the site clock stopped: {type(failure).__name__}: {failure}")

    def stop(self) -> None:
        """Stop the clock (the actuators keep the last command) and wait for its thread."""
        thread, self._thread = self._thread, None
        self._stopping = True
        if thread is not None:
            thread.join()
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None
        for tid, (policy, param) in self._promoted.items():
            with _permitted():  # a thread that has ended meanwhile: nothing to give back
                os.sched_setscheduler(tid, policy, param)
        self._promoted.clear()

    def forget(self, sample: int) -> None:
        """Drop the samples before ``sample`` and the steps that ended before it (stored elsewhere: the
        results file, the site's record file, or nobody asked for them), folded into the stats first.
        Call it under :attr:`lock`."""
        samples, steps = self.sample_log, self.step_log
        below = max(sample - 1, samples.first)
        self._lateness.add(samples.head(below)[:, 0])
        samples.forget(below)
        ended = steps.first + min(int(np.searchsorted(steps.head()[:, 0], sample)), steps.held - 1)
        self._forgotten_steps += steps.head(ended).sum(0)
        steps.forget(ended)

    def stats(self) -> dict[str, float]:
        """Counters and lateness of the run's steps (the site's ``close`` stats; docs/realtime.md); the samples
        after the last step (holding until the session closes) are not the test's."""
        log, steps = self.step_log, self.step_log.head()
        lateness = copy.deepcopy(self._lateness)
        lateness.add(self.sample_log.head(int(log.last()[0]) if log.rows else self.sample_log.first)[:, 0])
        sums = self._forgotten_steps + steps.sum(0)
        target = self.period * self.samples
        figures = {"clock_steps": float(log.rows), "clock_samples": float(lateness.samples),
                   "clock_slowed_steps": float(sums[3]), "clock_held_samples": float(sums[2]),
                   "clock_late_samples": float(lateness.late), "clock_target_step_s": target,
                   "clock_mean_step_s": float(sums[4] / log.rows) if log.rows else 0.0,
                   "clock_priority": self.scheduled["priority"], "clock_cpu": self.scheduled["cpu"]}
        if lateness.samples:
            p50, p99 = lateness.percentiles(50, 99)
            figures.update(clock_lateness_p50_us=p50, clock_lateness_p99_us=p99, clock_lateness_max_us=lateness.max_us)
        return figures

    # -- the clock thread -------------------------------------------------------------------------
    def _schedule(self) -> None:
        """SCHED_FIFO and a CPU for this thread, as far as the system permits (recorded in ``scheduled``)."""
        settings = self.settings
        if settings.priority > 0:
            with _permitted():
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(settings.priority))
                self.scheduled["priority"] = float(settings.priority)
        if settings.cpu is not None:
            with _permitted():
                os.sched_setaffinity(0, {settings.cpu})
                self.scheduled["cpu"] = float(settings.cpu)

    def _wait(self, due: float) -> float:
        """Sleep, then busy-wait, until ``due`` (perf_counter s); the time it returns."""
        rest = due - time.perf_counter() - self.settings.spin_s
        if rest > 0:
            time.sleep(rest)
        now = time.perf_counter()
        while now < due:
            now = time.perf_counter()
        return now

    def _run(self, history: np.ndarray, last: np.ndarray) -> None:
        try:
            self._schedule()
            self._loop(history, last)
        except BaseException as exc:  # the site refused a sample (a limit, its plant): the coordinator hears it
            with self._ready:
                self._failure = exc
                self._ready.notify_all()

    def _loop(self, history: np.ndarray, last: np.ndarray) -> None:
        settings, p = self.settings, self.order
        normal = 1.0 / self.samples
        switch_at = self.predicted_samples * normal
        origin = time.perf_counter()
        self.started_at = origin
        tick, step_began, tau = 0, origin, 0.0
        switch: tuple[float, np.ndarray] | None = None
        held, slowed, arrival, late = 0, False, math.nan, 0
        late_us = LATE_SHARE * self.period * 1e6
        while not self._stopping:
            due = origin + tick * self.period
            now = self._wait(due)
            lateness_us = 1e6 * (now - due)
            late += lateness_us > late_us
            step = self._done + 1
            with self._ready:
                delivered = self._targets.get(step)
            following = tau + normal
            if delivered is not None and following > switch_at + 1e-12:
                target = delivered[0]
                if switch is None:
                    switch = (tau, last)
                    arrival = (delivered[1] - step_began) / (self.period * self.samples)
                tau = 1.0 if following >= 1.0 - 1e-9 else following
                command, mode = corrected(tau, target, switch[0], switch[1], history, p), CORRECT
            elif following > settings.hold + 1e-12 or following >= 1.0 - 1e-9:
                command, mode = last, HELD
                held += 1
            elif following > settings.slow + 1e-12:
                slowed_to = tau + settings.rate * normal
                if slowed_to > settings.hold + 1e-12:
                    command, mode = last, HELD
                    held += 1
                else:
                    tau, slowed = slowed_to, True
                    command, mode = predicted(tau, history, p), SLOWED
            else:
                tau = following
                command, mode = predicted(tau, history, p), PREDICT
            with self.lock:
                response = self.advance(command)
                self.sample_log.append(lateness_us, (step - 1 + tau) * self.period * self.samples
                                       / settings.time_scale, mode, 1e6 * (time.perf_counter() - now))
            last = command
            tick += 1
            if mode == CORRECT and tau == 1.0:
                ended = self._end_step(step, response, tick, (arrival, held, float(slowed), late), step_began)
                history = np.vstack((target, history[:-1]))
                tau, switch, held, slowed, arrival, late, step_began = 0.0, None, 0, False, math.nan, 0, ended

    def _end_step(self, step: int, response: Any, tick: int, figures: tuple[float, int, float, int],
                  began: float) -> float:
        """Commit the step that ended at sample ``tick`` and hand its result over; its end (perf_counter s).
        ``figures``: the target's arrival, held samples, slowed (1) and late samples of the step."""
        arrival, held, slowed, late = figures
        self.commit()
        ended = time.perf_counter()
        self.step_log.append(tick, arrival, held, slowed, ended - began)
        with self._ready:
            counters = self.counters
            counters["clock_slowed_steps"] += slowed
            counters["clock_held_samples"] += held
            counters["clock_late_samples"] += late
            self._targets.pop(step, None)
            self._results[step] = (response, dict(counters))
            self._done = step
            self._ready.notify_all()
        return ended


MEASURED = ("measured_strokes", "measured_loads")
"""record fields measured at sample k (the others were sent at sample k and measured at k + 1)"""


def step_rows(record: Mapping[str, np.ndarray], steps: np.ndarray) -> dict[str, np.ndarray]:
    """The rows of a site's per-sample record that its steps ended on, as a lockstep site with one sample per
    step logs them: measured fields at the rest reading and at each step's end, sent fields (targets,
    commands) at the sample that ended each step (``steps``: the record clock/steps)."""
    ends = np.concatenate(([0], steps[:, 0].astype(int)))
    return {name: values[ends] if name in MEASURED else values[ends[1:] - 1] for name, values in record.items()}


@contextlib.contextmanager
def realtime_thread(priority: int) -> Iterator[bool]:
    """The calling thread under SCHED_FIFO at ``priority`` (0: unchanged) while the block runs, if the system
    permits (yields whether it did); its scheduler is given back after."""
    if priority <= 0:
        yield False
        return
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except OSError:
        yield False
        return
    try:
        yield True
    finally:
        os.sched_setscheduler(0, policy, param)


class _permitted:
    """Runs a scheduling request; a refusal (not root, no CAP_SYS_NICE, no such CPU) leaves the default."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        return kind is not None and issubclass(kind, OSError)
