"""The step loop: a pipeline of small parts, each owning its state.

One step of the loop (:meth:`Pipeline.run`)::

    stop_point()                               # a SIGINT or SIGTERM stops the run here, between two steps
    holds.gate(n)                              # an operator's hold or abort
    issued = clock.issue()                     # real time: sleep to the step's slot (the writer works then)
    integration.step(n)                        # predict, correct against the modules' forces, commit
    committed = clock.now()
    rows.put(n, ground[n], committed - issued) # row n into the window
    indicators(n)                              # [integrity]: the indicators into row n; a crossing acts
    queued = checkpoints.after(n)              # a block of rows or a checkpoint to the results writer
    records.after(n)                           # the modules' streamed records to the results writer
    observers.after(n)                         # listeners (the monitor), progress
    clock.done(n, issued, committed, queued)   # step times; real-time lateness and its causes

The integration step itself (any integrator)::

    f_{n+1} = -M r a_g(t_{n+1})
    d = integrator.predict(f_{n+1})
    while d is not None:                       # one pass for alpha-OS
        r = sum of module restoring forces at d (all modules in parallel)
        d = integrator.correct(r)
    commit the step at every module
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from hybridsim.coordinator.control import RunAborted, RunControl, StepListener
from hybridsim.coordinator.config_text import MAX_RECORDS
from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.integrators import Integrator, IntegratorError
from hybridsim.coordinator.interrupts import stop_point
from hybridsim.coordinator.lateness import LateCauses
from hybridsim.coordinator.model import DofReduction
from hybridsim.coordinator.pacing import Pacer, realtime_process
from hybridsim.coordinator.partition import ModuleStepError, Partition
from hybridsim.coordinator.recorder import Recorder, WriterPacing
from hybridsim.coordinator.window import Durations, Peaks, RowWindow
from hybridsim.wire.contract import ModuleError, Record

if TYPE_CHECKING:
    from hybridsim.coordinator.run_end import Status

RECORD_BLOCK = 1024
"""steps between the blocks of rows queued for the results writer"""

RECORDS_EVERY = 8 * RECORD_BLOCK
"""steps between two collections of the modules' streamed records: one call to each module that streams, the
rows queued for the results writer; a site forgets rows when the next call says they are stored, so it holds
at most two collections' steps of its record"""


@dataclass
class Figures:
    """What the summary needs of every row, observed as rows reach the results file (and, for a resumed run, as
    its rows up to the checkpoint are scanned); ``step``: the last step before this session's loop."""

    peaks: Peaks
    """peak displacements over every row"""
    step: int
    compute: Durations = field(default_factory=Durations)
    """compute time (issue to commit) of the steps of this loop"""
    evaluations: int = 0
    """module evaluations (trials, each sent to every module) of every step of the run: the steps of this loop,
    and a resumed run's steps up to its checkpoint as the results file's step IDs count them"""
    most_evaluations: int = 0
    """the most evaluations one step of the run took"""
    scanned_step_id: int = 0
    """a resume's scan of the file: the step ID of the last row it read"""

    def observe(self, first: int, rows: dict[str, np.ndarray]) -> None:
        """What the summary needs from rows ``first ..``."""
        self.peaks.observe(rows["displacement"], rows["time"])
        self.compute.extend(rows["wall_step_s"][max(self.step + 1 - first, 0):])
        earlier = np.asarray(rows["step_id"][:max(self.step + 1 - first, 0)], np.int64)
        if earlier.size:   # a step's trials are the step IDs it took: row n's ID less row n - 1's (row 0: pre-test)
            trials = np.diff(earlier, prepend=self.scanned_step_id if first else earlier[0])
            self.evaluations += int(trials.sum())
            self.most_evaluations = max(self.most_evaluations, int(trials.max()))
            self.scanned_step_id = int(earlier[-1])

    def count(self, trials: int) -> None:
        """A step of this loop took ``trials`` evaluations."""
        self.evaluations += trials
        self.most_evaluations = max(self.most_evaluations, trials)


@dataclass(frozen=True)
class Start:
    """Where the step loop begins: after the pre-test, or at a checkpoint."""

    integrator: Integrator
    reduction: DofReduction
    window: RowWindow
    recorder: Recorder
    step: int
    """index of the last completed step"""
    step_id: int
    """module step ID committed at that step"""
    asymmetry: float
    figures: Figures
    resumed_from: int | None = None
    """a resumed run's: the step of the checkpoint it began at (``step`` then)"""
    periods: tuple[float, ...] = ()
    """the structure's first natural periods (s) from M and the pre-test's K_I (:mod:`hybridsim.coordinator.periods`)"""
    origin: np.ndarray | None = None
    """a test program's: the displacement where its current stage began (m, rad), kept with every checkpoint"""
    integrity: np.ndarray | None = None
    """a resumed run's: its [integrity] monitor's state at the checkpoint (:data:`INTEGRITY_STATE`), continued"""
    acted: frozenset[tuple[str, str]] = frozenset()
    """a resumed run's: the (module, indicator) that acted after its checkpoint, before the run stopped"""


STAGE_ORIGIN = "stage_origin"
"""the checkpoint's array of a test program's :attr:`Start.origin`"""


INTEGRITY_STATE = "integrity"
"""the checkpoint's array of the [integrity] monitor's state (:meth:`~hybridsim.coordinator.integrity.monitor.
IntegrityMonitor.state`)"""


def checkpoint_state(integrator: Integrator, origin: np.ndarray | None,
                     integrity: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """What a checkpoint keeps of the loop: the integrator's committed state, in a test program where its current
    stage began (a static stage resumed inside ramps from it), with [integrity] its monitor's state."""
    state = integrator.state()
    if origin is not None:
        state[STAGE_ORIGIN] = origin.copy()
    if integrity is not None:
        state[INTEGRITY_STATE] = integrity
    return state


class Holds:
    """An operator's hold or abort, asked before each step; a held real-time run lets its writer write and
    restarts its clock when it resumes.  A stalled results writer holds the run too (no step is computed that
    the file may never hold), said on the monitor (the run's state ``held: results writer stalled for N s``)."""

    def __init__(self, control: RunControl, dt: float, status: "Status", pacer: Pacer | None,
                 recorder: Recorder) -> None:
        self.control, self.dt, self.status, self.pacer, self.recorder = control, dt, status, pacer, recorder
        self._holds = control.holds
        self._on_hold = pacer.writer.holding if pacer is not None and pacer.writer is not None else None

    def stalled(self, seconds: float) -> None:
        """The results writer has been stalled for ``seconds`` (s; 0: it answers again)."""
        self.control.notice = f"results writer stalled for {seconds:.0f} s" if seconds else ""

    def gate(self, n: int) -> None:
        """Wait while held or while the results writer is stalled; stop the run (before step n) once aborted."""
        if self.recorder.hold_while_stalled():
            stop_point()  # a Ctrl-C or SIGTERM in the hold: no step after it
            if self.pacer is not None:
                self.pacer.resync()
        try:
            self.control.gate(self._on_hold)
        except RunAborted as exc:
            self.status.stopped(f"{exc} after step {n - 1}", step=n, time_s=n * self.dt)
            raise RunStopped(f"{exc} after step {n - 1} (t = {(n - 1) * self.dt:.6g} s); the results file "
                             f"holds every step up to it") from None
        if self.pacer is not None and self.control.holds != self._holds:
            self._holds = self.control.holds
            self.pacer.resync()


class Integration:
    """The integration step over the modules; owns the module step ID committed last."""

    def __init__(self, start: Start, partition: Partition, ground: np.ndarray, dt: float, status: "Status") -> None:
        """``ground``: a_g(t_k) (m/s^2) over the steps, one column per excitation component when there are several."""
        self.integrator, self.reduction, self.partition = start.integrator, start.reduction, partition
        self.ground, self.dt, self.status, self.figures = ground, dt, status, start.figures
        self.step_id = start.step_id
        reduction = start.reduction
        self._load_shape = reduction.force(reduction.model.load_shape())
        self._load, self._reduced = np.empty(reduction.ndof), np.empty(reduction.ndof)
        self._times = np.multiply if ground.ndim == 1 else np.matmul
        """f = (-M r) a_g: one component's product, or several components' sum"""
        self.held: np.ndarray | None = None
        """forces held from a test program's earlier stages, added to every step's load (N)"""
        self.row_offset = 0
        """a test program's stage: the results row of its step 0 (step n is row n + row_offset, and the modules
        see it at t = (n + row_offset) dt)"""
        self._full = np.empty(partition.ndof)

    def step(self, n: int) -> None:
        """Step n: predict, correct against the modules' restoring forces until the integrator is done, commit."""
        integrator, reduction, partition = self.integrator, self.reduction, self.partition
        t = (n + self.row_offset) * self.dt  # the modules' clock: one dt a results row
        try:
            first_id = step_id = self.step_id + 1
            load = self._times(self._load_shape, self.ground[n], out=self._load)
            if self.held is not None:
                load += self.held
            trial = integrator.predict(load)
            while trial is not None:
                force = partition.restoring_force(step_id, t, reduction.expand(trial, self._full))
                trial = integrator.correct(reduction.force(force, self._reduced))
                if trial is not None:
                    step_id += 1
            partition.commit(step_id)
        except ModuleStepError as exc:
            row = n + self.row_offset
            located = exc.at_row(row, t)
            self.status.stopped(str(located), step=row, time_s=t, module=exc.module_name, cause=str(exc.cause))
            raise located from exc.cause
        except IntegratorError as exc:
            row = n + self.row_offset
            self.status.stopped(f"step {row}: {exc}", step=row, time_s=t, cause=str(exc))
            raise RunStopped(f"step {row} (t = {t:.6g} s): {exc}") from None
        self.step_id = step_id
        self.figures.count(step_id - first_id + 1)


class Rows:
    """Row n of the window: the committed state on all DOFs and what every module measured."""

    def __init__(self, start: Start, partition: Partition) -> None:
        self.integrator, self.reduction, self.window, self.recorder = (start.integrator, start.reduction,
                                                                       start.window, start.recorder)
        self.partition = partition
        self._full = np.zeros(partition.ndof)
        """where a condensed state is expanded to all DOFs before it is recorded"""
        self._components = "ground_components" in self.window.arrays
        """several excitation components: each in its column, the first also as ground_acceleration"""
        self.program: Any = None
        """a test program (:class:`hybridsim.coordinator.stages.program.Program`): each row's time and stage"""

    def put(self, n: int, ground: float | np.ndarray, wall: float, step_id: int) -> None:
        """Row n, its ground acceleration, compute time (s) and module step ID; the committed state from the
        integrator's arrays.

        Its slot in the window held row n - capacity: if the results writer has not written that row yet
        (it fell a whole window behind), wait for it.
        """
        integrator, reduction, window, recorder = self.integrator, self.reduction, self.window, self.recorder
        a = window.arrays
        if n - window.capacity >= recorder.rows:
            recorder.submit(window.rows)
            recorder.wait_written(n - window.capacity + 1)
        i = window.slot(n)
        if self.program is None:
            a["time"][i] = n * integrator.dt
        else:
            a["time"][i] = self.program.times[n]
            a["stage"][i] = self.program.stage_of[n]
        a["step_id"][i] = step_id
        if self._components:
            a["ground_components"][i] = ground
            ground = ground[0]
        a["ground_acceleration"][i] = ground
        a["wall_step_s"][i] = wall
        full = self._full  # condensed: each value is computed here, then copied into its row
        a["displacement"][i] = reduction.expand(integrator.displacement, full)
        a["velocity"][i] = reduction.expand(integrator.velocity, full)
        a["acceleration"][i] = reduction.expand(integrator.acceleration, full)
        a["restoring_force"][i] = reduction.place(integrator.restoring_force, full)
        for slot, (disp, force), result in zip(self.partition.slots, window.modules, self.partition.last_results):
            disp[i] = result.displacement
            force[i] = result.force
            if result.counters:  # only when they changed: a site clock's slowed steps, held and late samples
                window.counters[slot.name] = {**window.counters.get(slot.name, {}), **result.counters}
        window.rows = n + 1


class Checkpoints:
    """What the results writer gets after a step: every :data:`RECORD_BLOCK` steps a block of rows; every
    ``every`` steps (``output.checkpoint_every``, 0: never) a checkpoint (the rows before it, the integrator's
    state and every module's checkpoint).  A writer that failed stops the run here."""

    def __init__(self, start: Start, partition: Partition, every: int, status: "Status", monitor: Any = None) -> None:
        """``monitor``: [integrity]'s (:class:`~hybridsim.coordinator.integrity.monitor.IntegrityMonitor`), whose
        state each checkpoint keeps."""
        self.recorder, self.window, self.integrator = start.recorder, start.window, start.integrator
        self.partition, self.every, self.status, self.origin = partition, every, status, start.origin
        self.monitor = monitor

    def after(self, n: int, step_id: int) -> bool:
        """After step n (module step ID ``step_id``): whether it queued rows or a checkpoint."""
        if self.recorder.failure is not None:
            raise_on_failure(self.recorder, self.status)
        if self.every and n % self.every == 0:
            self.checkpoint(n, step_id)
        elif n % RECORD_BLOCK == 0:
            self.recorder.submit(self.window.rows)
        else:
            return False
        return True

    def checkpoint(self, n: int, step_id: int) -> None:
        """Queue rows up to n, then the integrator's and every module's state of step n."""
        modules = {}
        for slot in self.partition.slots:
            try:
                modules[slot.name] = slot.module.checkpoint()
            except ModuleError as exc:
                raise ModuleStepError(slot, step_id, exc) from exc
        integrity = self.monitor.state() if self.monitor is not None else None
        self.recorder.checkpoint(n, step_id, checkpoint_state(self.integrator, self.origin, integrity), modules)


class Records:
    """The modules' streamed records: which modules stream, and the rows of each collected so far."""

    def __init__(self, partition: Partition, wanted: bool) -> None:
        self.partition, self.wanted = partition, wanted
        self.rows: dict[str, int] = {}
        """the modules that stream records, and the rows of them collected so far"""
        self.recorder: Recorder | None = None

    def streamed(self) -> dict[str, list[Record]]:
        """The modules' streamed records as they stand (their names and columns: the results file's datasets);
        the rows to collect from each start at 0."""
        if not self.wanted:
            return {}
        blocks = self.partition.streamed(0, {s.name: 0 for s in self.partition.slots})
        streamed = {name: [r for r in records if r.first_row is not None] for name, records in blocks.items()}
        for name, records in streamed.items():
            if len(records) > MAX_RECORDS:
                raise UsageError(f"module {name!r}: {len(records)} streamed records, more than the {MAX_RECORDS} a "
                                 "results file is measured to hold for one module; record fewer signals in the module, "
                                 "or set output.records = false")
        self.rows = {name: 0 for name, records in streamed.items() if records}
        return {name: streamed[name] for name in self.rows}

    def after(self, n: int, step_id: int) -> None:
        """Every :data:`RECORDS_EVERY` steps queue the rows since the last collection for the results writer."""
        if not self.rows or n % RECORDS_EVERY or self.recorder is None:
            return
        for name, records in self.partition.streamed(step_id, self.rows).items():
            streamed = [r for r in records if r.first_row is not None]
            if streamed:
                self.recorder.records(name, streamed)
                self.rows[name] = int(streamed[0].first_row or 0) + len(streamed[0].values)


class Observers:
    """The step listeners (the monitor) and the progress callback; the steps of the last progress call."""

    def __init__(self, listeners: Sequence[StepListener], progress: Any, window: RowWindow, last: int) -> None:
        self.listeners, self.progress, self.view, self.last = tuple(listeners), progress, window.view, last
        self.reported = -1

    def after(self, n: int) -> None:
        for listener in self.listeners:
            listener(n, self.view)
        if self.progress is not None:
            self.progress(n, self.last)
            self.reported = n

    def stalled(self, seconds: float) -> None:
        """The results writer has been stalled for ``seconds`` (s; 0: it answers again): the progress line says so."""
        note = getattr(self.progress, "note", None)
        if note is not None:
            note(f"results writer stalled for {seconds:.0f} s" if seconds else "")

    def ended(self, rows: int) -> None:
        """A run that stopped early: one more progress call with the steps its results file holds."""
        if self.progress is not None and rows - 1 != self.reported:
            self.progress(rows - 1, self.last)


class Clock:
    """When steps are issued and how long they took: the step-time distribution; in real time the pacer (its
    slot, late steps; its writer's pacing) and the causes of late episodes."""

    def __init__(self, dt: float, recorder: Recorder, realtime: bool) -> None:
        self.step_times = Durations()
        """each step's whole wall time (s): from its issue to the end of everything the coordinator does for it"""
        self.pacer = Pacer(dt, WriterPacing(recorder)) if realtime else None
        self.late_causes = LateCauses(dt, recorder.activity, recorder.counts) if realtime else None
        self.loop_wall_s = 0.0

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """The loop's span: the real-time process tuning and the lateness attribution in force; its wall time."""
        with (self.late_causes or contextlib.nullcontext()), \
                (realtime_process() if self.pacer else contextlib.nullcontext()):
            began = time.perf_counter()
            try:
                yield
            finally:
                self.loop_wall_s = time.perf_counter() - began

    def issue(self) -> float:
        """The wall time a step is issued (s): now, or in real time at its slot."""
        return time.perf_counter() if self.pacer is None else self.pacer.wait()

    def done(self, n: int, issued: float, committed: float, queued: bool) -> None:
        """Step n, issued and committed at those wall times (s), ends now; ``queued``: it queued a write."""
        end = time.perf_counter()
        self.step_times.add(end - issued)
        if self.pacer is not None:
            lateness = self.pacer.done(end)
            if self.late_causes is not None:
                self.late_causes.step(n, self.pacer.slot_start, issued, committed, end, lateness, queued)


@dataclass
class Pipeline:
    """The parts of the loop, in the order a step goes through them."""

    holds: Holds
    clock: Clock
    integration: Integration
    rows: Rows
    checkpoints: Checkpoints
    records: Records
    observers: Observers
    indicators: Callable[[int], None] | None = None
    """[integrity]'s monitor (:class:`~hybridsim.coordinator.integrity.monitor.IntegrityMonitor`): each step's
    indicators into its row before the row may be queued for the results file, so no indicator is written
    without its step, nor a step without its indicators"""

    def __post_init__(self) -> None:
        self.holds.recorder.on_stall = self._stalled

    def _stalled(self, seconds: float) -> None:
        self.holds.stalled(seconds)
        self.observers.stalled(seconds)

    def run(self, first: int, last: int) -> None:
        """Steps ``first .. last`` (see the module docstring)."""
        holds, clock, integration, rows = self.holds, self.clock, self.integration, self.rows
        checkpoints, records, observers, ground = self.checkpoints, self.records, self.observers, integration.ground
        indicators = self.indicators
        with clock.running():
            for n in range(first, last + 1):
                stop_point()
                holds.gate(n)
                issued = clock.issue()
                integration.step(n)
                committed = time.perf_counter()
                rows.put(n, ground[n], committed - issued, integration.step_id)
                if indicators is not None:
                    indicators(n)
                queued = checkpoints.after(n, integration.step_id)
                records.after(n, integration.step_id)
                observers.after(n)
                clock.done(n, issued, committed, queued)


def raise_on_failure(recorder: Recorder, status: "Status") -> None:
    """Stop the run with the results writer's one-line failure, if it has one."""
    if recorder.failure is not None:
        status.stopped(recorder.failure, step=recorder.rows, cause=recorder.failure)
        raise RunStopped(recorder.failure)
