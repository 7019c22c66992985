"""Running an experiment: start modules, pre-test, integrate, record, checkpoint, summarise; resume.

One time step of the coordinator (any integrator)::

    f_{n+1} = -M r a_g(t_{n+1})
    d = integrator.predict(f_{n+1})
    while d is not None:                       # one pass for alpha-OS
        r = sum of module restoring forces at d (all modules in parallel)
        d = integrator.correct(r)
    commit the step at every module; record the row

Every ``output.checkpoint_every`` steps the integrator state and every
module's checkpoint go into the results file; :func:`resume_run` continues
a run that stopped (coordinator killed, a site restarted) from there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.allocator import one_arena
from hybridsim.coordinator.control import RunAborted, RunControl, StepListener
from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.lateness import LateCauses
from hybridsim.coordinator.experiment import Experiment, ExperimentError, ModuleSpec, parse_experiment
from hybridsim.coordinator.network import with_networks
from hybridsim.coordinator.integrators import Integrator, IntegratorError, integrator_class
from hybridsim.coordinator.interrupts import stop_point
from hybridsim.coordinator.pacing import Pacer, realtime_process
from hybridsim.coordinator.model import DofReduction, StructuralModel, rayleigh_coefficients
from hybridsim.coordinator.ownership import RunLock
from hybridsim.coordinator.partition import ModuleSlot, ModuleStepError, Partition
from hybridsim.coordinator.pretest import pretest
from hybridsim.coordinator.recorder import (Checkpoint, Recorder, ResultsFileError, annotate, read_attributes,
                                            read_checkpoint, read_results, read_rows, scan_rows, write_records)
from hybridsim.coordinator.site_config import checked_config, description_record
from hybridsim.coordinator.units import DISPLACEMENT, KindConflict, dof_kinds, labels, ordered_dofs
from hybridsim.coordinator.window import Durations, Peaks, RowWindow, results_columns
from hybridsim.modules.config_schema import ConfigError
from hybridsim.wire.contract import Module, ModuleError, Record, Session
from hybridsim.wire.network import NetworkEmulator
from hybridsim.wire.starters import launch
from hybridsim.modules.registry import build_module


@dataclass
class RunResult:
    """A run's summary, and its response history (arrays over steps x DOFs) read from its results file.

    The run itself keeps only a window of rows in memory (:mod:`hybridsim.coordinator.window`); the
    history arrays (``time`` s, ``displacement`` m or rad, ``velocity``, ``acceleration``,
    ``restoring_force`` N or N*m) are read from ``output`` on first use and then kept.
    """

    dofs: tuple[str, ...]
    initial_stiffness: np.ndarray
    summary: dict[str, Any] = field(default_factory=dict)
    output: Path | None = None
    _stored: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def _history(self, key: str) -> np.ndarray:
        if self._stored is None:
            if self.output is None:
                raise ValueError("this run has no results file to read its history from")
            self._stored = read_results(self.output)
        return self._stored[key]

    time = property(lambda self: self._history("time"), doc="time of each row (s)")
    displacement = property(lambda self: self._history("displacement"), doc="steps x DOFs (m, rad)")
    velocity = property(lambda self: self._history("velocity"), doc="steps x DOFs (m/s, rad/s)")
    acceleration = property(lambda self: self._history("acceleration"), doc="steps x DOFs (m/s^2, rad/s^2)")
    restoring_force = property(lambda self: self._history("restoring_force"), doc="steps x DOFs (N, N*m)")

    def __getitem__(self, dof: str) -> np.ndarray:
        """Displacement history of one DOF (m or rad)."""
        return self.displacement[:, self.dofs.index(dof)]


ProgressCallback = Callable[[int, int], None]
"""``progress(done, total)``: after every step (``done``: the steps completed, of ``total``); a run that stops
early calls it once more with the steps its results file holds if that differs from the last call"""


def run_experiment(experiment: Experiment, *, output: Path | None = None, progress: ProgressCallback | None = None,
                   control: RunControl | None = None, listeners: Sequence[StepListener] = (),
                   realtime: bool = False, overwrite: bool = False, takeover: bool = False) -> RunResult:
    """Run ``experiment`` end to end; results stream to ``output`` (default: the experiment's).

    ``control`` lets another thread hold, resume or abort the run; each of ``listeners`` is called
    with the index of every completed step (see ``hybridsim.coordinator.control``).  ``realtime`` paces the
    steps to the wall clock (see :class:`Pacer`).  An existing results file is replaced only with
    ``overwrite``; a file a live run holds never is (:mod:`hybridsim.coordinator.ownership`).  ``takeover``:
    a site in another coordinator's open session is taken over (else it refuses the run).
    """
    one_arena()  # before the run's threads start (hybridsim.coordinator.allocator: RSS flat over a long run)
    output = Path(output or experiment.output)
    with contextlib.ExitStack() as stack:
        stack.enter_context(RunLock(output))
        if output.exists() and not overwrite:
            raise UsageError(f"{output} exists ({_describe_results(output)}); give --overwrite to replace it, "
                             f"or --output NEW.h5 to write a new file")
        networks: dict[str, NetworkEmulator] = {}
        slots = _start_modules(experiment.modules, stack, networks)
        run = _Run(experiment, slots, output, progress, control or RunControl(), listeners, realtime, takeover,
                   networks)
        return run.execute(run.fresh_start)


def resume_run(results: str | Path, *, progress: ProgressCallback | None = None, control: RunControl | None = None,
               listeners: Sequence[StepListener] = (), realtime: bool = False, takeover: bool = False,
               network: Sequence[str] = ()) -> RunResult:
    """Continue the run of a results file from its last checkpoint, writing into the same file (``takeover``:
    as in :func:`run_experiment`; a site still in the session of the run that died needs it).  ``network``:
    ``--network`` options: the rest of the run goes across other emulated paths than the stopped run's (the file
    keeps the experiment as resumed, so a later resume takes the same).

    The experiment is rebuilt from the copy stored in the file; every module is opened afresh and
    restored from its checkpoint (a site that kept running returns to it, a restarted one loads
    it); the integrator continues from its checkpointed state with the same K_I, M and C.
    """
    one_arena()  # as in run_experiment
    path = Path(results)
    with contextlib.ExitStack() as stack:
        stack.enter_context(RunLock(path))
        checkpoint = read_checkpoint(path)
        if checkpoint is None:
            raise UsageError(f"{path} has no checkpoint to resume from (set output.checkpoint_every in the experiment)")
        attrs = read_attributes(path)
        if attrs.get("status") == "completed":
            raise UsageError(f"{path} holds a completed run; there is nothing to resume")
        experiment = stored_experiment(attrs, network)
        networks: dict[str, NetworkEmulator] = {}
        slots = _start_modules(experiment.modules, stack, networks)
        run = _Run(experiment, slots, path, progress, control or RunControl(), listeners, realtime, takeover,
                   networks)
        return run.execute(lambda: run.resumed_start(checkpoint))


def _describe_results(path: Path) -> str:
    """What an existing results file holds, in a few words."""
    try:
        attrs = read_attributes(path)
    except OSError:
        return "not a readable results file"
    return f"{attrs.get('experiment', '?')}: {attrs.get('status', '?')}, {attrs.get('completed_steps', '?')} rows"


def stored_experiment(attrs: dict[str, Any], network: Sequence[str] = ()) -> Experiment:
    """The experiment stored in a results file's attributes (:func:`hybridsim.coordinator.recorder.read_attributes`);
    ``network``: ``--network`` options that replace its modules' network tables (a resume across other paths)."""
    try:
        table = with_networks(json.loads(attrs["experiment_table"]), network)
    except ConfigError as exc:
        raise ExperimentError(str(exc)) from None
    return parse_experiment(table, base_dir=Path(attrs["base_dir"]), source=attrs["source"])


def _start_modules(specs: Sequence[ModuleSpec], stack: contextlib.ExitStack,
                   networks: dict[str, NetworkEmulator]) -> list[tuple[ModuleSpec, Module, str]]:
    """The modules of ``specs`` by the wire's starter table; the local daemons boot in parallel (all launched
    before any is waited for).  ``networks`` receives the emulated paths of lab-protocol clients by name."""
    specs = [_across_network(spec, stack, networks) for spec in specs]
    launched = []
    for spec in specs:
        with _named(spec):
            launched.append(launch(spec, stack))
    started = []
    for spec, start in zip(specs, launched):
        with _named(spec):
            module, where = start(lambda: build_module(spec.kind, spec.config, spec.base_dir))
        started.append((spec, module, where))
    return started


def _across_network(spec: ModuleSpec, stack: contextlib.ExitStack, networks: dict[str, NetworkEmulator]) -> ModuleSpec:
    """A lab-protocol client (in process, its server's ``address`` in its config) with an emulated network: its
    config's address replaced by the proxy's, the proxy's counters added to its summary at close.  (A module
    at an address takes its network to its RemoteModule through the starter.)"""
    if spec.network is None or spec.address is not None:
        return spec
    emulator = stack.enter_context(NetworkEmulator(spec.network))
    networks[spec.name] = emulator
    return dataclasses.replace(spec, config={**spec.config, "address": emulator.route(spec.config["address"])})


@contextlib.contextmanager
def _named(spec: ModuleSpec) -> Iterator[None]:
    """A ModuleError raised inside becomes a UsageError naming the module."""
    try:
        yield
    except ModuleError as exc:
        origin = f", config {spec.config_file}" if spec.config_file else ""
        raise UsageError(f"module {spec.name!r} ({spec.kind}{origin}): {exc}") from None


@dataclass
class _Start:
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
    peaks: Peaks
    """peak displacements over every row (updated by the results writer as it writes them)"""
    resumed_from: int | None = None
    """a resumed run's: the step of the checkpoint it began at (``step`` then)"""
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
        """What the summary needs from rows ``first ..`` (called for every block the recorder writes, and by a
        resume for the rows up to its checkpoint)."""
        self.peaks.observe(rows["displacement"], rows["time"])
        self.compute.extend(rows["wall_step_s"][max(self.step + 1 - first, 0):])
        earlier = np.asarray(rows["step_id"][:max(self.step + 1 - first, 0)], np.int64)
        if earlier.size:   # a step's trials are the step IDs it took: row n's ID less row n - 1's (row 0: pre-test)
            trials = np.diff(earlier, prepend=self.scanned_step_id if first else earlier[0])
            self.evaluations += int(trials.sum())
            self.most_evaluations = max(self.most_evaluations, int(trials.max()))
            self.scanned_step_id = int(earlier[-1])


class _Run:
    """One run of an experiment over its started modules."""

    def __init__(self, experiment: Experiment, modules: list[tuple[ModuleSpec, Module, str]], output: Path,
                 progress: ProgressCallback | None, control: RunControl, listeners: Sequence[StepListener],
                 realtime: bool = False, takeover: bool = False,
                 networks: dict[str, NetworkEmulator] | None = None) -> None:
        self.experiment = experiment
        self.takeover = takeover
        self.networks = networks or {}
        """the emulated paths of lab-protocol clients (a RemoteModule reports its own at close)"""
        self.pacer = Pacer(experiment.dt) if realtime else None
        self.record_rows: dict[str, int] = {}
        """the modules that stream records, and the rows of them collected so far"""
        self.late_causes: LateCauses | None = None
        """why real-time steps were late (a real-time run's)"""
        self.output = output
        self.progress = progress
        self.reported = -1
        """the steps of the last progress call"""
        self.control = control
        self.listeners = tuple(listeners)
        dofs = experiment.dofs
        lookup = {d: i for i, d in enumerate(dofs)}
        slots = []
        self.descriptions: dict[str, dict[str, Any]] = {}
        """what ran at each module: its description and configuration as it reports them"""
        for spec, module, where in modules:
            try:
                description = module.describe()
            except ModuleError as exc:
                raise RunStopped(f"module {spec.name!r} ({where}) did not describe itself: {exc}") from None
            if description.role == "control_backend":
                raise UsageError(f"module {spec.name!r} ({where}) is a {description.kind} module, a control backend "
                                 "that describes no substructure: use it as an experimental site's backend "
                                 "(backend = {daemon = {...}} or {address = ...}), not in [[modules]]")
            self.descriptions[spec.name] = description_record(description, where,
                                                              checked_config(spec, description, where))
            unknown = [d for d in description.dof_names if d not in lookup]
            if unknown:
                raise UsageError(f"module {spec.name!r} has DOF(s) {unknown} that are not in structure.dofs")
            index = np.array([lookup[d] for d in description.dof_names], dtype=int)
            slots.append(ModuleSlot(spec.name, module, description, index, where))
        self.partition = Partition(len(dofs), slots)
        self._full_row = np.zeros(len(dofs))
        """where a condensed state is expanded to all DOFs before it is recorded"""
        if self.partition.unowned.size:
            names = [dofs[i] for i in self.partition.unowned]
            raise UsageError(f"structure DOF(s) {names} belong to no module; every DOF needs stiffness from a module")
        try:
            self.kinds = dof_kinds(dofs, {s.name: s.description for s in slots})
        except KindConflict as exc:
            raise UsageError(str(exc)) from None
        """translation or rotation, per structure DOF"""

    # -- the two ways to start ---------------------------------------------
    def fresh_start(self) -> _Start:
        """Pre-test, assemble M, C and K_I, start the integrator at rest, create the results file."""
        exp, partition = self.experiment, self.partition
        measured = pretest(partition, exp.pretest_amplitude)
        model = self._assemble_model(measured.stiffness)
        reduction = DofReduction(model, measured.stiffness, exp.condense_massless)
        integrator = self._integrator(reduction)
        integrator.start(np.zeros(reduction.ndof), np.zeros(reduction.ndof),
                         reduction.force(model.ground_load(exp.motion.at(0))), reduction.force(measured.rest_force))
        widths = {s.name: s.ndof for s in partition.slots}
        window = RowWindow(results_columns(model.ndof, widths), widths)
        window.descriptions = self.descriptions
        recorder = _results_file(lambda: Recorder(
            self.output, window.columns, dofs=exp.dofs,
            attrs={"experiment": exp.name, "source": exp.source, "experiment_table": json.dumps(exp.table),
                   "base_dir": str(exp.base_dir), "dt": exp.dt,
                   "integrator": exp.integrator, "pretest_asymmetry": measured.asymmetry,
                   "modules": {s.name: s.where for s in partition.slots},
                   "module_descriptions": self.descriptions},
            model={"mass": model.mass, "damping": model.damping, "initial_stiffness": measured.stiffness},
            checkpoint_state=integrator.state() if exp.checkpoint_every else None,
            checkpoint_modules=[s.name for s in partition.slots],
            labels=labels(exp.dofs, self.kinds, {s.name: (s.description, s.where) for s in partition.slots}),
            streamed=self._streamed()))
        start = _Start(integrator, reduction, window, recorder, 0, measured.last_step, measured.asymmetry,
                       Peaks(model.ndof))
        self._put(start, exp.motion.at(0), 0.0)
        return start

    def resumed_start(self, checkpoint: Checkpoint) -> _Start:
        """Restore every module and the integrator from ``checkpoint``; keep the file's rows up to it."""
        exp, partition = self.experiment, self.partition
        for slot in partition.slots:
            try:
                slot.module.restore(checkpoint.modules[slot.name])
            except (KeyError, ModuleError) as exc:
                raise RunStopped(f"module {slot.name!r} ({slot.where}) could not be restored: {exc}") from None
        rows = checkpoint.step + 1
        widths = {s.name: s.ndof for s in partition.slots}
        window = RowWindow(results_columns(len(exp.dofs), widths), widths)
        window.descriptions = self.descriptions
        first = max(rows - window.capacity, 0)
        stored = read_rows(self.output, first, rows)
        model = StructuralModel(exp.dofs, stored["model/mass"], stored["model/damping"], exp.influence)
        stiffness = stored["model/initial_stiffness"]
        reduction = DofReduction(model, stiffness, exp.condense_massless)
        integrator = self._integrator(reduction)
        integrator.set_state(checkpoint.integrator)
        window.load(stored, first, rows)
        start = _Start(integrator, reduction, window, None, checkpoint.step, checkpoint.step_id,  # type: ignore[arg-type]
                       float(read_attributes(self.output).get("pretest_asymmetry", 0.0)), Peaks(model.ndof),
                       resumed_from=checkpoint.step)
        scan_rows(self.output, rows, start.observe)
        streamed = self._streamed()
        table = {"experiment_table": json.dumps(exp.table)}  # as resumed (its network may be another)
        start.recorder = _results_file(lambda: Recorder.reopen(self.output, rows, streamed, table))
        return start

    # -- the run -----------------------------------------------------------
    def execute(self, begin: Callable[[], _Start]) -> RunResult:
        """Open every module, start (``begin``: fresh or resumed), integrate to the end, close, evaluate."""
        exp, partition = self.experiment, self.partition
        wall_start = time.perf_counter()
        try:
            partition.open(lambda s: Session(exp.dt, s.description.dof_names, run_id=exp.name,
                                             takeover=self.takeover, records=exp.records,
                                             iterating=integrator_class(exp.integrator).takes_back_trials))
            start = begin()
        except BaseException:
            partition.close()
            raise
        closed = False
        records: tuple[dict[str, Any], dict[str, str]] = ({}, {})
        try:
            start.recorder.start(start.window, start.observe, paced=self.pacer is not None)
            with recorder_closed(start.recorder, start.window) as status:
                try:
                    loop_wall, step_times = self._loop(start, status)
                finally:  # the modules' own records, before their sessions close (a failed module's: none)
                    records = partition.records(skip=(status.stop or {}).get("module"), since=self.record_rows)
                start.recorder.submit(start.window.rows)
                start.recorder.wait_written(start.window.rows)
                # completed once every row is on disk: only then may the modules drop what a resume needs
                summaries, closed = partition.close(completed=start.recorder.failure is None), True
                for name, network in self.networks.items():
                    summaries[name] = {**summaries[name], **network.stats()}
                _raise_on_failure(start.recorder, status)
                summary = _summary(exp, start, loop_wall, step_times, time.perf_counter() - wall_start, summaries,
                                   self.pacer, self._peak_order())
                if self.late_causes is not None:
                    summary["late_causes"] = self.late_causes.summary(loop_wall)
                status.completed(summary)
        finally:
            if not closed:
                partition.close()
            if any(records) and start.recorder.failure is None:
                write_records(self.output, *records)
            if self.progress is not None and start.recorder.rows - 1 != self.reported:  # an early stop
                self.progress(start.recorder.rows - 1, exp.steps)
        if exp.evaluation is not None:
            summary["evaluation"] = _evaluate(exp, self.output)
        return RunResult(exp.dofs, start.reduction.stiffness, summary, self.output)

    def _loop(self, start: _Start, status: "_Status") -> tuple[float, Durations]:
        """Integrate from the step after ``start.step`` to the end of the record.

        Returns the loop's wall time (s) and the distribution of each step's whole wall time (s): from its
        issue to the end of everything the coordinator does for it (modules, integrator, queueing its row
        for the results writer, listeners, progress), the time it holds of its real-time slot.  The
        results file's ``/wall_step_s`` is the compute part (issue to commit at every module).
        """
        step_times = Durations()
        pacer = self.pacer
        recorder = start.recorder
        self.late_causes = LateCauses(self.experiment.dt, recorder.activity, recorder.counts) if pacer else None
        with self.late_causes or contextlib.nullcontext(), realtime_process() if pacer else contextlib.nullcontext():
            loop_start = time.perf_counter()
            self._steps(start, status, step_times, self.late_causes)
        return time.perf_counter() - loop_start, step_times

    def _steps(self, start: _Start, status: "_Status", step_times: Durations, causes: LateCauses | None) -> None:
        """Every step after ``start.step`` (see :meth:`_loop`); each step's whole wall time into ``step_times``."""
        exp, partition, control, listeners, progress = (self.experiment, self.partition, self.control,
                                                        self.listeners, self.progress)
        integrator, reduction, window, recorder = start.integrator, start.reduction, start.window, start.recorder
        load_shape = reduction.force(reduction.model.ground_load(1.0))
        load, full_trial, reduced_force = np.empty_like(load_shape), np.empty(partition.ndof), np.empty_like(load_shape)
        ground, dt, first, last = exp.motion.acceleration, exp.dt, start.step + 1, exp.steps
        step_id = start.step_id
        pacer, holds = self.pacer, control.holds
        if pacer is not None:
            pacer.idle = recorder.collect
        for n in range(first, last + 1):
            stop_point()  # a SIGINT or SIGTERM stops the run here, between two steps
            try:
                control.gate(recorder.let_write)  # a held real-time run lets its writer catch up
            except RunAborted as exc:
                status.stopped(f"{exc} after step {n - 1}", step=n, time_s=n * dt)
                raise RunStopped(f"{exc} after step {n - 1} (t = {(n - 1) * dt:.6g} s); the results file "
                                 f"holds every step up to it") from None
            if pacer is not None and control.holds != holds:
                holds = control.holds
                pacer.resync()
            t0 = time.perf_counter() if pacer is None else pacer.wait()
            t = n * dt
            try:
                first_id = step_id = step_id + 1
                trial = integrator.predict(np.multiply(load_shape, ground[n], out=load))
                while trial is not None:
                    force = partition.restoring_force(step_id, t, reduction.expand(trial, full_trial))
                    trial = integrator.correct(reduction.force(force, reduced_force))
                    if trial is not None:
                        step_id += 1
                partition.commit(step_id)
            except ModuleStepError as exc:
                located = exc.at_row(n, t)
                status.stopped(str(located), step=n, time_s=t, module=exc.module_name, cause=str(exc.cause))
                raise located from exc.cause
            except IntegratorError as exc:
                status.stopped(f"step {n}: {exc}", step=n, time_s=t, cause=str(exc))
                raise RunStopped(f"step {n} (t = {t:.6g} s): {exc}") from None
            start.step_id = step_id
            trials = step_id - first_id + 1
            start.evaluations += trials
            start.most_evaluations = max(start.most_evaluations, trials)
            committed = time.perf_counter()
            self._put(start, ground[n], committed - t0)
            if recorder.failure is not None:
                _raise_on_failure(recorder, status)
            queued = True
            if exp.checkpoint_every and n % exp.checkpoint_every == 0:
                self._checkpoint(start, n)
            elif n % RECORD_BLOCK == 0:
                recorder.submit(window.rows)
            else:
                queued = False
            if self.record_rows and n % RECORDS_EVERY == 0:
                self._collect_records(start)
            for listener in listeners:
                listener(n, window.view)
            if progress is not None:
                progress(n, last)
                self.reported = n
            end = time.perf_counter()
            step_times.add(end - t0)
            if pacer is not None:
                lateness = pacer.done(end)
                if causes is not None:
                    causes.step(n, pacer.slot_start, t0, committed, end, lateness, queued)

    def _checkpoint(self, start: _Start, n: int) -> None:
        """Queue rows up to n, then the integrator's and every module's state of step n, for the results writer."""
        modules = {}
        for slot in self.partition.slots:
            try:
                modules[slot.name] = slot.module.checkpoint()
            except ModuleError as exc:
                raise ModuleStepError(slot, start.step_id, exc) from exc
        start.recorder.checkpoint(n, start.step_id, start.integrator.state(), modules)

    def _streamed(self) -> dict[str, list[Record]]:
        """The modules' streamed records as they stand (their names and columns: the results file's datasets);
        the rows to collect from each start at 0."""
        if not self.experiment.records:
            return {}
        blocks = self.partition.streamed(0, {s.name: 0 for s in self.partition.slots})
        streamed = {name: [r for r in records if r.first_row is not None] for name, records in blocks.items()}
        self.record_rows = {name: 0 for name, records in streamed.items() if records}
        return {name: streamed[name] for name in self.record_rows}

    def _collect_records(self, start: _Start) -> None:
        """Queue the rows of the modules' streamed records since the last collection for the results writer."""
        for name, records in self.partition.streamed(start.step_id, self.record_rows).items():
            streamed = [r for r in records if r.first_row is not None]
            if streamed:
                start.recorder.records(name, streamed)
                self.record_rows[name] = int(streamed[0].first_row or 0) + len(streamed[0].values)

    def _put(self, start: _Start, ground: float, wall: float) -> None:
        """Row n = integrator.step: the committed state on all DOFs and what every module measured.

        Its slot in the window held row n - capacity: if the results writer has not written that row yet
        (it fell a whole window behind), wait for it.
        """
        integrator, reduction, window = start.integrator, start.reduction, start.window
        n, a = integrator.step, window.arrays
        if n - window.capacity >= start.recorder.rows:
            start.recorder.submit(window.rows)
            start.recorder.wait_written(n - window.capacity + 1)
        i = window.slot(n)
        a["time"][i] = n * integrator.dt
        a["step_id"][i] = start.step_id
        a["ground_acceleration"][i] = ground
        a["wall_step_s"][i] = wall
        full = self._full_row  # condensed: each value is computed here, then copied into its row
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

    def _peak_order(self) -> list[tuple[int, str, str]]:
        """(index, DOF, unit) of every DOF for the peak table: floors (shaken), interfaces, then the rest."""
        dofs = self.experiment.dofs
        owners = {d: 0 for d in dofs}
        for slot in self.partition.slots:
            for d in slot.description.dof_names:
                owners[d] += 1
        order = ordered_dofs(dofs, [v != 0 for v in self.experiment.influence], owners)
        index = {d: i for i, d in enumerate(dofs)}
        return [(index[d], d, DISPLACEMENT[self.kinds[index[d]]]) for d in order]

    # -- model -------------------------------------------------------------
    def _assemble_model(self, stiffness: np.ndarray) -> StructuralModel:
        exp = self.experiment
        mass = exp.mass.copy()
        extra_damping = np.zeros_like(mass)
        for slot in self.partition.slots:
            block = np.ix_(slot.index, slot.index)
            if slot.description.mass is not None:
                mass[block] += slot.description.mass
            if slot.description.damping is not None:
                extra_damping[block] += slot.description.damping
        spec = exp.damping
        if spec.matrix is not None:
            damping = spec.matrix.copy()
        elif spec.rayleigh or spec.rayleigh_omega:
            a, b = spec.rayleigh or rayleigh_coefficients(*spec.rayleigh_omega, spec.zeta)  # type: ignore[misc]
            damping = a * mass + b * stiffness
        else:
            damping = np.zeros_like(mass)
        return StructuralModel(exp.dofs, mass, damping + extra_damping, exp.influence)

    def _integrator(self, reduction: DofReduction) -> Integrator:
        exp = self.experiment
        try:
            scheme = integrator_class(exp.integrator)
            return scheme(reduction.mass, reduction.damping, reduction.stiffness, exp.dt, **exp.integrator_options)
        except IntegratorError as exc:
            raise UsageError(f"integrator: {exc}") from None


RECORD_BLOCK = 1024
RECORDS_EVERY = 8 * RECORD_BLOCK
"""steps between two collections of the modules' streamed records: one call to each module that streams, the
rows queued for the results writer; a site forgets rows when the next call says they are stored, so it holds
at most two collections' steps of its record"""
"""steps between the blocks of rows queued for the results writer"""


def _results_file(open_file: Callable[[], Recorder]) -> Recorder:
    """``open_file()``; a results file whose disk has no room stops the run with its one line."""
    try:
        return open_file()
    except ResultsFileError as exc:
        raise RunStopped(str(exc)) from None


def _raise_on_failure(recorder: Recorder, status: "_Status") -> None:
    """Stop the run with the results writer's one-line failure, if it has one."""
    if recorder.failure is not None:
        status.stopped(recorder.failure, step=recorder.rows, cause=recorder.failure)
        raise RunStopped(recorder.failure)


class _Status:
    """How a run ended: ``text`` is the file's ``status``; ``stop`` says why and where it stopped (attribute "stop")."""

    def __init__(self) -> None:
        self.text = "stopped: interrupted"
        self.summary: dict[str, Any] | None = None
        self.stop: dict[str, Any] | None = {"reason": "interrupted"}

    def stopped(self, reason: str, *, step: int | None = None, time_s: float | None = None, module: str | None = None,
                cause: str | None = None) -> None:
        """The run stops: ``reason`` in full; the step n that did not complete, its time (s), the module, the cause."""
        self.text = f"stopped: {reason}"
        where = {"step": step, "time_s": time_s, "module": module, "cause": cause}
        self.stop = {"reason": reason, **{k: v for k, v in where.items() if v is not None}}

    def completed(self, summary: dict[str, Any]) -> None:
        self.text, self.summary, self.stop = "completed", summary, None


@contextlib.contextmanager
def recorder_closed(recorder: Recorder, window: RowWindow) -> Iterator[_Status]:
    """Write every completed row and close the recorder with the run's final status, however the run ends."""
    status = _Status()
    try:
        yield status
    except BaseException as exc:
        if status.text == "stopped: interrupted" and not isinstance(exc, KeyboardInterrupt):
            status.stopped(f"{type(exc).__name__}: {exc}", step=window.rows, cause=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        recorder.submit(window.rows)
        recorder.close(status.text, status.summary, status.stop)


def _evaluate(experiment: Experiment, results: Path) -> dict[str, Any]:
    """The reference problem's criteria of a finished run, also stored in the results file (attribute "J")."""
    from hybridsim.coordinator.problems import evaluate

    figures = evaluate(experiment, results)
    annotate(results, "J", figures["J"])
    annotate(results, "evaluation", {k: v for k, v in figures.items() if k != "table"})
    return figures


COVERAGE = ("steps, module_evaluations and the peaks cover the whole run; wall_s, loop_wall_s, steps_per_second, "
            "step_time_us, compute_time_us and the late steps cover the steps_this_session steps of this session, "
            "which for a resumed run are those after the checkpoint at resumed_from_step")
STEP_TIME_BASIS = ("step_time_us: issue to the end of all the coordinator's work for the step (modules, integrator, "
                   "recording, listeners, progress), what a real-time slot must hold; compute_time_us: issue to "
                   "commit at every module (the results file's /wall_step_s)")


def _summary(exp: Experiment, start: _Start, loop_wall: float, step_times: Durations, total_wall: float,
             modules: dict[str, dict[str, float]], pacer: Pacer | None,
             peak_order: Sequence[tuple[int, str, str]]) -> dict[str, Any]:
    """The run's figures; the step-time distributions and rates are over the steps of this loop, the counts of
    steps and evaluations and the peaks over the whole run (see COVERAGE, STEP_TIME_BASIS).

    Quantiles come from :class:`hybridsim.coordinator.window.Durations` (within 0.25 %, maximum exact).
    The peaks follow ``peak_order`` ((index, DOF, unit): floors, interfaces, then the rest)."""
    rows = start.window.rows
    realtime, late = pacer is not None, pacer.late if pacer is not None else 0
    looped = rows - 1 - start.step
    return {
        "experiment": exp.name,
        "integrator": exp.integrator,
        "dt_s": exp.dt,
        "steps": rows - 1,
        "resumed_from_step": start.resumed_from,
        "steps_this_session": looped,
        "coverage": COVERAGE,
        "simulated_s": float(start.window.view["time"][rows - 1]),
        "wall_s": total_wall,
        "loop_wall_s": loop_wall,
        "steps_per_second": looped / loop_wall if loop_wall > 0 else float("inf"),
        "module_evaluations": {"per_step": start.evaluations / (rows - 1) if rows > 1 else 0.0,
                               "max_in_a_step": start.most_evaluations},
        "pretest_asymmetry": start.asymmetry,
        "step_time_us": step_times.quantiles_us(),
        "compute_time_us": start.compute.quantiles_us(),
        "step_time_basis": STEP_TIME_BASIS,
        "realtime": realtime,
        "late_steps": late,
        "late_steps_pct": 100.0 * late / looped if looped else 0.0,
        "max_lateness_us": 1e6 * pacer.max_lateness_s if pacer is not None else 0.0,
        "peak_displacement": {d: float(start.peaks.value[i]) for i, d, _ in peak_order},
        "peak_time_s": {d: float(start.peaks.time[i]) for i, d, _ in peak_order},
        "peak_units": {d: unit for _, d, unit in peak_order},
        "modules": modules,
        "network": {m.name: m.network.describe() for m in exp.modules if m.network is not None},
    }
