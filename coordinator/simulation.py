"""Running an experiment: start modules, pre-test, integrate, record, checkpoint, summarise; resume.

:func:`run_experiment` and :func:`resume_run` start the modules and hand them, with the experiment and the run's
:class:`RunOptions`, to a :class:`_Run`: it opens every module's session, begins (the pre-test and a new results
file, or a checkpoint and the file continued), runs the step loop (:mod:`hybridsim.coordinator.run_loop`, where
the integration step is written out) and ends the run (:mod:`hybridsim.coordinator.run_end`).  Every
``output.checkpoint_every`` steps the integrator state and every module's checkpoint go into the results file;
:func:`resume_run` continues a run that stopped (coordinator killed, a site restarted) from there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from hybridsim.coordinator.allocator import one_arena
from hybridsim.coordinator.control import RunControl, StepListener
from hybridsim.coordinator.config_text import rows_refusal
from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.excitation import dataset_labels
from hybridsim.coordinator.experiment import Experiment, ExperimentError, ModuleSpec, parse_experiment
from hybridsim.coordinator.integrity.columns import acted_after, indicator_columns, indicator_labels, require_kept
from hybridsim.coordinator.integrity.monitor import IntegrityMonitor, integrity_monitor, state_shape
from hybridsim.coordinator.network import with_networks
from hybridsim.coordinator.similitude import ScaledModule
from hybridsim.coordinator.integrators import Integrator, IntegratorError, integrator_class
from hybridsim.coordinator.model import DofReduction, StructuralModel, rayleigh_coefficients
from hybridsim.coordinator.ownership import RunLock
from hybridsim.coordinator.partition import ModuleSlot, Partition, coupling_problem
from hybridsim.coordinator.periods import describe as describe_periods, natural_periods
from hybridsim.coordinator.pretest import pretest
from hybridsim.coordinator.recorder.holds import cleared
from hybridsim.coordinator.recorder.inputs import INPUTS, compared, fingerprint
from hybridsim.coordinator.recorder.layout import model_matrix
from hybridsim.coordinator.recorder import (Checkpoint, Recorder, ResultsFileError, annotate, read_attributes,
                                            read_checkpoint, read_results, read_rows, scan_rows, write_records)
from hybridsim.coordinator.run_end import Status, recorder_closed, summary, with_network_stats
from hybridsim.coordinator.run_loop import (Checkpoints, Clock, Figures, Holds, Integration, Observers, Pipeline,
                                            Records, Rows, INTEGRITY_STATE, STAGE_ORIGIN, Start, checkpoint_state,
                                            raise_on_failure)
from hybridsim.coordinator.stages.base import StageContext
from hybridsim.coordinator.stages.program import StagedIntegration
from hybridsim.coordinator.site_config import checked_config, described, description_record
from hybridsim.coordinator.units import DISPLACEMENT, KindConflict, dof_kinds, labels, ordered_dofs
from hybridsim.coordinator.window import Peaks, RowWindow, results_columns
from hybridsim.modules import matrices
from hybridsim.modules.config_schema import ConfigError
from hybridsim.wire.contract import Module, ModuleError, Session
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


@dataclass(frozen=True)
class RunOptions:
    """How to run an experiment (what is not the experiment itself): see :func:`run_experiment`."""

    output: Path
    progress: ProgressCallback | None = None
    control: RunControl = field(default_factory=RunControl)
    listeners: tuple[StepListener, ...] = ()
    realtime: bool = False
    takeover: bool = False
    announce: Callable[[str], None] | None = None
    """given the lines a run says before its first step (the structure's natural periods)"""


@dataclass
class _Started:
    """The started modules ((spec, module, where) each) and the emulated paths of lab-protocol clients by name."""

    modules: list[tuple[ModuleSpec, Module, str]]
    networks: dict[str, NetworkEmulator]


def run_experiment(experiment: Experiment, *, output: Path | None = None, progress: ProgressCallback | None = None,
                   control: RunControl | None = None, listeners: Sequence[StepListener] = (),
                   realtime: bool = False, overwrite: bool = False, takeover: bool = False,
                   announce: Callable[[str], None] | None = None) -> RunResult:
    """Run ``experiment`` end to end; results stream to ``output`` (default: the experiment's).

    ``control`` lets another thread hold, resume or abort the run; each of ``listeners`` is called
    with the index of every completed step (see ``hybridsim.coordinator.control``).  ``realtime`` paces the
    steps to the wall clock (see :class:`hybridsim.coordinator.pacing.Pacer`).  An existing results file is
    replaced only with ``overwrite``; a file a live run holds never is (:mod:`hybridsim.coordinator.ownership`).
    ``takeover``: a site in another coordinator's open session is taken over (else it refuses the run).
    ``announce`` is given the structure's natural periods before the first step (:mod:`hybridsim.coordinator.periods`).
    """
    one_arena()  # before the run's threads start (hybridsim.coordinator.allocator: RSS flat over a long run)
    options = RunOptions(Path(output or experiment.output), progress, control or RunControl(), tuple(listeners),
                         realtime, takeover, announce)
    with contextlib.ExitStack() as stack:
        stack.enter_context(RunLock(options.output))
        if options.output.exists() and not overwrite:
            raise UsageError(f"{options.output} exists ({_describe_results(options.output)}); give --overwrite to "
                             f"replace it, or --output NEW.h5 to write a new file")
        run = _Run(experiment, options, _start(experiment.modules, stack))
        return run.execute(run.fresh_start)


def resume_run(results: str | Path, *, progress: ProgressCallback | None = None, control: RunControl | None = None,
               listeners: Sequence[StepListener] = (), realtime: bool = False, takeover: bool = False,
               network: Sequence[str] = (), announce: Callable[[str], None] | None = None,
               accept_changed: Sequence[str] = (), clear_hold: Sequence[str] = ()) -> RunResult:
    """Continue the run of a results file from its last checkpoint, writing into the same file (``takeover``:
    as in :func:`run_experiment`; a site still in the session of the run that died needs it).  ``network``:
    ``--network`` options: the rest of the run goes across other emulated paths than the stopped run's (the file
    keeps the experiment as resumed, so a later resume takes the same).  An input changed since the run began
    (:mod:`hybridsim.coordinator.recorder.inputs`: a module's configuration, a file the run names) is refused
    unless ``accept_changed`` names it (recorded in the file), and so is a run whose site's hold ended with it
    unless ``clear_hold`` names the site (:mod:`hybridsim.coordinator.recorder.holds`).

    The experiment is rebuilt from the file's copy; every module is opened afresh and restored from its checkpoint
    (a site that kept running returns to it, a restarted one loads it); the integrator from its, same K_I, M, C.
    """
    one_arena()  # as in run_experiment
    options = RunOptions(Path(results), progress, control or RunControl(), tuple(listeners), realtime, takeover,
                         announce)
    path = options.output
    with contextlib.ExitStack() as stack:
        stack.enter_context(RunLock(path, "it needs no resume while it runs: wait for it to end"))
        checkpoint, attrs = _resumable(path)
        experiment = stored_experiment(attrs, network)
        holds = cleared(path, attrs, experiment.modules, clear_hold, checkpoint.step)
        run = _Run(experiment, options, _start(experiment.modules, stack))
        inputs = compared(path, attrs, run.inputs(), accept_changed, checkpoint.step)
        return run.execute(lambda: run.resumed_start(checkpoint, inputs | holds))


def _resumable(path: Path) -> tuple[Checkpoint, dict[str, Any]]:
    """The last verified checkpoint of a results file and its attributes; a file that has none, or cannot be
    read (not found, truncated, zeroed, its bytes changed), is refused in one line."""
    attrs = stored_attributes(path)
    if attrs.get("status") == "completed":  # before its checkpoints: a run made without any may have completed
        raise UsageError(f"{path} holds a completed run; there is nothing to resume")
    try:
        checkpoint = read_checkpoint(path)
    except UNREADABLE as exc:
        raise UsageError(f"{path}: not readable as a results file ({_first_line(exc)})") from None
    if checkpoint is None:
        raise UsageError(f"{path} has no checkpoint to resume from: run the experiment again (hybridsim run "
                         "--overwrite), with output.checkpoint_every set so that its next stop can be resumed")
    return checkpoint, attrs


UNREADABLE = (OSError, RuntimeError, KeyError, ValueError)
"""what h5py raises for a damaged file: a chunk or a header that fails its read, a link that cannot be found"""


def stored_attributes(path: Path) -> dict[str, Any]:
    """The attributes of a results file to resume; one line if it cannot be read (not found, truncated, zeroed)."""
    try:
        return read_attributes(path)
    except UNREADABLE as exc:
        raise UsageError(f"{path}: not readable as a results file ({_first_line(exc)})") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _start(specs: Sequence[ModuleSpec], stack: contextlib.ExitStack) -> _Started:
    networks: dict[str, NetworkEmulator] = {}
    return _Started(_start_modules(specs, stack, networks), networks)


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
    except (KeyError, ValueError) as exc:
        raise UsageError(f"the results file's stored experiment is missing or damaged ({_first_line(exc)})") from None
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
        started.append((spec, module if spec.scale.unit else ScaledModule(module, spec.scale), where))
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


class _Run:
    """One run of an experiment over its started modules."""

    def __init__(self, experiment: Experiment, options: RunOptions, started: _Started) -> None:
        self.experiment, self.options, self.networks = experiment, options, started.networks
        self.output = options.output
        self.descriptions: dict[str, dict[str, Any]] = {}
        """what ran at each module: its description and configuration as it reports them"""
        slots = [self._slot(spec, module, where) for spec, module, where in started.modules]
        self.partition = Partition(len(experiment.dofs), slots)
        self.influence, self.ground = experiment.ground()
        """r and a_g(t_k): one column each per excitation component when there are several"""
        self.row_ground = self.ground if experiment.program is None else experiment.program.ground
        """each row's a_g (a test program's: zero outside its dynamic stages)"""
        for slot in slots:
            problem = coupling_problem(slot, experiment.integrator, experiment.integrator_options,
                                       experiment.condense_massless,
                                       (experiment.motion.time, experiment.motion.acceleration))
            if not problem and experiment.more_components and "dynamic" in slot.description.info:
                problem = (f"module {slot.name!r} excites its own mass with one record: it cannot take several "
                           "[[excitation]] components; give the experiment one [ground_motion]")
            if problem:
                raise UsageError(problem)
        if self.partition.unowned.size:
            names = [experiment.dofs[i] for i in self.partition.unowned]
            raise UsageError(f"structure DOF(s) {names} belong to no module; every DOF needs stiffness from a module")
        try:
            self.kinds = dof_kinds(experiment.dofs, {s.name: s.description for s in slots})
        except KindConflict as exc:
            raise UsageError(str(exc)) from None
        """translation or rotation, per structure DOF"""
        self.records = Records(self.partition, experiment.records)
        self.closed = False
        """every module's session is closed"""

    def _slot(self, spec: ModuleSpec, module: Module, where: str) -> ModuleSlot:
        """A started module's place in the partition, from its description (which must own structure DOFs)."""
        description = described(spec, module, where)  # a token refused: one line naming the fix
        if description.role == "control_backend":
            raise UsageError(f"module {spec.name!r} ({where}) is a {description.kind} module, a control backend "
                             "that describes no substructure: use it as an experimental site's backend "
                             "(backend = {daemon = {...}} or {address = ...}), not in [[modules]]")
        self.descriptions[spec.name] = description_record(description, where, checked_config(spec, description, where))
        lookup = {d: i for i, d in enumerate(self.experiment.dofs)}
        unknown = [d for d in description.dof_names if d not in lookup]
        if unknown:
            raise UsageError(f"module {spec.name!r} has DOF(s) {unknown} that are not in structure.dofs")
        index = np.array([lookup[d] for d in description.dof_names], dtype=int)
        return ModuleSlot(spec.name, module, description, index, where)

    def inputs(self) -> dict[str, str]:
        """The run's input digests (:func:`hybridsim.coordinator.recorder.inputs.fingerprint`)."""
        return fingerprint(self.experiment, {name: d["config"] for name, d in self.descriptions.items()})

    # -- the two ways to start ---------------------------------------------
    def fresh_start(self) -> Start:
        """Pre-test, assemble M, C and K_I, start the integrator at rest, create the results file."""
        exp, partition = self.experiment, self.partition
        refusal = rows_refusal(len(exp.dofs), sum(s.ndof for s in partition.slots))
        if refusal is not None:  # (the modules' DOFs are known once they are open, before the pre-test moves them)
            raise UsageError(refusal)
        streamed = self.records.streamed()  # (a module past the records cap is refused before the pre-test moves it)
        measured = pretest(partition, exp.pretest_amplitude, sparse=sp.issparse(exp.mass))
        model = self._assemble_model(measured.stiffness)
        reduction = DofReduction(model, measured.stiffness, exp.condense_massless)
        integrator = self._integrator(reduction)  # (an explicit scheme past its limit refuses the run in one line)
        periods = self._announced(natural_periods(measured.stiffness, model.mass))
        integrator.start(np.zeros(reduction.ndof), np.zeros(reduction.ndof),
                         reduction.force(model.ground_load(self.row_ground[0])), reduction.force(measured.rest_force))
        origin = np.zeros(reduction.ndof) if exp.program is not None else None
        window = self._window()
        recorder = _results_file(lambda: Recorder(
            self.output, window.columns, dofs=exp.dofs,
            attrs={"experiment": exp.name, "source": exp.source, "experiment_table": json.dumps(exp.table),
                   "base_dir": str(exp.base_dir), "dt": exp.dt,
                   "integrator": exp.integrator, "pretest_asymmetry": measured.asymmetry,
                   "natural_periods_s": list(periods),
                   "stages": exp.program.describe() if exp.program else [],
                   "modules": {s.name: s.where for s in partition.slots},
                   "module_descriptions": self.descriptions, INPUTS: self.inputs()},
            model={"mass": model.mass, "damping": model.damping, "initial_stiffness": measured.stiffness},
            checkpoint_state=checkpoint_state(integrator, origin, state_shape(exp.integrity, partition.slots))
            if exp.checkpoint_every else None,
            checkpoint_modules=[s.name for s in partition.slots],
            labels=labels(exp.dofs, self.kinds, {s.name: (s.description, s.where) for s in partition.slots})
            | dataset_labels(exp.components) | (exp.program.labels() if exp.program else {})
            | indicator_labels({s.name: s.description for s in partition.slots if s.name in exp.integrity}),
            streamed=streamed))
        start = Start(integrator, reduction, window, recorder, 0, measured.last_step, measured.asymmetry,
                      Figures(Peaks(model.ndof), 0), periods=periods, origin=origin)
        self._rows(start).put(0, self.row_ground[0], 0.0, start.step_id)
        return start

    def resumed_start(self, checkpoint: Checkpoint, inputs: dict[str, str]) -> Start:
        """Restore every module and the integrator from ``checkpoint``; keep the file's rows up to it; ``inputs``:
        the attributes of what the run resumes with (:func:`hybridsim.coordinator.recorder.inputs.compared`)."""
        exp, partition = self.experiment, self.partition
        for slot in partition.slots:
            try:
                slot.module.restore(checkpoint.modules[slot.name])
            except (KeyError, ModuleError) as exc:
                raise RunStopped(f"module {slot.name!r} ({slot.where}) could not be restored: {exc}") from None
        rows = checkpoint.step + 1
        window = self._window()
        first = max(rows - window.capacity, 0)
        stored = read_rows(self.output, first, rows)
        n = len(exp.dofs)
        model = StructuralModel(exp.dofs, model_matrix(stored, "mass", n), model_matrix(stored, "damping", n),
                                self.influence)
        reduction = DofReduction(model, model_matrix(stored, "initial_stiffness", n), exp.condense_massless)
        integrator = self._integrator(reduction)
        integrator.set_state(checkpoint.integrator)
        origin = None if exp.program is None else np.array(  # (a file written before it was kept ramped from 0)
            checkpoint.integrator.get(STAGE_ORIGIN, np.zeros(reduction.ndof)), float)
        require_kept(stored, window.columns, self.output)
        window.load(stored, first, rows)
        figures = Figures(Peaks(model.ndof), checkpoint.step)
        scan_rows(self.output, rows, figures.observe)
        attrs = read_attributes(self.output)  # (before the writer has it)
        asymmetry = float(attrs.get("pretest_asymmetry", 0.0))
        periods = self._announced(tuple(json.loads(attrs.get("natural_periods_s", "[]"))))
        streamed = self.records.streamed()
        table = {"experiment_table": json.dumps(exp.table), **inputs}  # as resumed (its network may be another)
        recorder = _results_file(lambda: Recorder.reopen(self.output, rows, streamed, table))
        acted = acted_after(self.output, exp.integrity, rows, attrs)
        return Start(integrator, reduction, window, recorder, checkpoint.step, checkpoint.step_id, asymmetry, figures,
                     resumed_from=checkpoint.step, periods=periods, origin=origin,
                     integrity=checkpoint.integrator.get(INTEGRITY_STATE), acted=acted)

    def _window(self) -> RowWindow:
        """The run's window over every per-step dataset: the response, each module's, the watched ones' indicators."""
        exp, slots = self.experiment, self.partition.slots
        widths = {s.name: s.ndof for s in slots}
        window = RowWindow(results_columns(len(exp.dofs), widths, len(exp.components), exp.program is not None)
                           | indicator_columns({s.name: s.ndof for s in slots if s.name in exp.integrity}), widths)
        window.descriptions = self.descriptions
        return window

    def _announced(self, periods: tuple[float, ...]) -> tuple[float, ...]:
        """``periods`` (s), said before the first step."""
        if self.options.announce is not None:
            self.options.announce(describe_periods(periods))
        return periods

    # -- the run -----------------------------------------------------------
    def execute(self, begin: Callable[[], Start]) -> RunResult:
        """Open every module, start (``begin``: fresh or resumed), integrate to the end, close, evaluate."""
        exp, partition = self.experiment, self.partition
        wall_start = time.perf_counter()
        try:
            partition.open(lambda s: Session(exp.dt, s.description.dof_names, run_id=exp.name,
                                             takeover=self.options.takeover, records=exp.records,
                                             iterating=integrator_class(exp.integrator).takes_back_trials
                                             or exp.program is not None))  # (a static stage's Newton trials)
            start = begin()
        except BaseException:
            partition.close()
            raise
        clock = Clock(exp.dt, start.recorder, self.options.realtime)
        observers = Observers(self.options.listeners, self.options.progress, start.window, exp.steps)
        records: tuple[dict[str, Any], dict[str, str]] = ({}, {})
        try:
            start.recorder.on_stall = observers.stalled  # (a writer stalled as it starts; the loop adds the monitor)
            start.recorder.start(start.window, start.figures.observe, paced=clock.pacer is not None)
            with recorder_closed(start.recorder, start.window) as status:
                monitor = integrity_monitor(exp.integrity, partition, start, exp.dt,
                                            lambda text, n, t, name: status.stopped(text, step=n, time_s=t,
                                                                                    module=name, cause=text))
                try:
                    self._pipeline(start, status, clock, observers, monitor).run(start.step + 1, exp.steps)
                except BaseException as exc:
                    self._stopped(start, status, clock, exc, time.perf_counter() - wall_start)
                    status.summary = {**(status.summary or {}), **(monitor.summary() if monitor else {})}
                    raise
                finally:  # the modules' own records, before their sessions close (a failed module's: none)
                    records = partition.records(skip=(status.stop or {}).get("module"), since=self.records.rows)
                figures = self._completed(start, status, clock, time.perf_counter() - wall_start)
                figures.update(monitor.summary() if monitor else {})
        finally:
            if not self.closed:
                partition.close()
            if any(records) and start.recorder.failure is None:
                write_records(self.output, *records)
            observers.ended(start.recorder.rows)
        if exp.evaluation is not None:
            figures["evaluation"] = _evaluate(exp, self.output)
        return RunResult(exp.dofs, start.reduction.stiffness, figures, self.output)

    def _pipeline(self, start: Start, status: Status, clock: Clock, observers: Observers,
                  indicators: IntegrityMonitor | None) -> Pipeline:
        """The step loop's parts over this run (see :mod:`hybridsim.coordinator.run_loop`)."""
        exp, partition = self.experiment, self.partition
        self.records.recorder = start.recorder
        return Pipeline(holds=Holds(self.options.control, exp.dt, status, clock.pacer, start.recorder), clock=clock,
                        integration=self._integration(start, status), rows=self._rows(start),
                        checkpoints=Checkpoints(start, partition, exp.checkpoint_every, status, indicators),
                        records=self.records, observers=observers, indicators=indicators)

    def _integration(self, start: Start, status: Status) -> Integration | StagedIntegration:
        """The loop's integration part: the integrator over the excitation, or a test program's stages."""
        exp, partition = self.experiment, self.partition
        if exp.program is None:
            return Integration(start, partition, self.ground, exp.dt, status)
        stiffness = start.reduction.stiffness
        context = StageContext(partition, start.integrator, start.reduction.model,
                               stiffness.toarray() if sp.issparse(stiffness) else stiffness, start.step_id,
                               dt=exp.dt, start=start, status=status, origin=start.origin)
        return StagedIntegration(exp.program, context, status)

    def _rows(self, start: Start) -> Rows:
        """The loop's rows part (a test program's rows carry their time and stage)."""
        rows = Rows(start, self.partition)
        rows.program = self.experiment.program
        return rows

    def _stopped(self, start: Start, status: Status, clock: Clock, exc: BaseException, wall: float) -> None:
        """A run that stops keeps its statistics: where it stopped (the step that did not complete and its time, a
        signal's name) and the summary of the steps it ran, over its rows on disk (its modules' own figures are not
        in it: their sessions close after the file).  A summary that cannot be made leaves the stop as it is."""
        n, dt = start.window.rows, self.experiment.dt
        if status.unexplained and isinstance(exc, KeyboardInterrupt):
            name = signal.Signals(getattr(exc, "signum", signal.SIGINT)).name
            status.stopped("interrupted", step=n, time_s=n * dt, signal=name)
        elif status.unexplained:
            status.stopped(f"{type(exc).__name__}: {exc}", step=n, time_s=n * dt, cause=f"{type(exc).__name__}: {exc}")
        recorder = start.recorder
        with contextlib.suppress(Exception):
            if recorder.failure is None:  # the summary observes the rows as they reach the file
                recorder.submit(n)
                recorder.wait_written(n)
            figures = summary(self.experiment, start, clock.loop_wall_s, clock.step_times, wall, {}, clock.pacer,
                              self._peak_order())
            if clock.late_causes is not None:
                figures["late_causes"] = clock.late_causes.summary(clock.loop_wall_s)
            status.summary = figures

    def _completed(self, start: Start, status: Status, clock: Clock, wall: float) -> dict[str, Any]:
        """Every row on disk, the modules closed (completed: only then may they drop what a resume needs), the
        summary made and given to ``status``."""
        recorder = start.recorder
        recorder.submit(start.window.rows)
        recorder.wait_written(start.window.rows)
        closing, self.closed = self.partition.close(completed=recorder.failure is None), True
        raise_on_failure(recorder, status)
        figures = summary(self.experiment, start, clock.loop_wall_s, clock.step_times, wall,
                          with_network_stats(closing, self.networks), clock.pacer, self._peak_order())
        if clock.late_causes is not None:
            figures["late_causes"] = clock.late_causes.summary(clock.loop_wall_s)
        status.completed(figures)
        return figures

    def _peak_order(self) -> list[tuple[int, str, str]]:
        """(index, DOF, unit) of every DOF for the peak table: floors (shaken), interfaces, then the rest."""
        dofs = self.experiment.dofs
        owners = {d: 0 for d in dofs}
        for slot in self.partition.slots:
            for d in slot.description.dof_names:
                owners[d] += 1
        order = ordered_dofs(dofs, list(np.any(self.influence.reshape(len(dofs), -1) != 0, axis=1)), owners)
        index = {d: i for i, d in enumerate(dofs)}
        return [(index[d], d, DISPLACEMENT[self.kinds[index[d]]]) for d in order]

    # -- model -------------------------------------------------------------
    def _assemble_model(self, stiffness: np.ndarray | sp.csr_matrix) -> StructuralModel:
        """M, C over the structure's DOFs: the structure's own plus the modules' (sparse if the mass is)."""
        exp = self.experiment
        sparse = sp.issparse(exp.mass)
        mass = exp.mass.copy()
        extra_damping = sp.csr_matrix(mass.shape) if sparse else np.zeros_like(mass)
        for slot in self.partition.slots:
            mass = _add_block(mass, slot.description.mass, slot.index)
            extra_damping = _add_block(extra_damping, slot.description.damping, slot.index)
        spec = exp.damping
        if spec.matrix is not None:
            damping = sp.csr_matrix(spec.matrix) if sparse else _dense(spec.matrix)
        elif spec.rayleigh or spec.rayleigh_omega:
            a, b = spec.rayleigh or rayleigh_coefficients(*spec.rayleigh_omega, spec.zeta)  # type: ignore[misc]
            damping = a * mass + b * stiffness
        else:
            damping = sp.csr_matrix(mass.shape) if sparse else np.zeros_like(mass)
        return StructuralModel(exp.dofs, mass, damping + extra_damping, self.influence)

    def _integrator(self, reduction: DofReduction) -> Integrator:
        exp = self.experiment
        try:
            scheme = integrator_class(exp.integrator)
            return scheme(reduction.mass, reduction.damping, reduction.stiffness, exp.dt, **exp.integrator_options)
        except IntegratorError as exc:
            raise UsageError(f"integrator: {exc}") from None



def _add_block(matrix: np.ndarray | sp.csr_matrix, block: np.ndarray | None, index: np.ndarray
               ) -> np.ndarray | sp.csr_matrix:
    """``matrix`` with a module's ``block`` added over its DOFs ``index`` (in place for a dense one)."""
    if block is None:
        return matrix
    if sp.issparse(matrix):
        return matrix + matrices.place(block, index, matrix.shape[0])
    matrix[np.ix_(index, index)] += block
    return matrix


def _dense(matrix: np.ndarray | sp.spmatrix) -> np.ndarray:
    """A copy of ``matrix`` as a dense array (a sparse damping file beside a dense mass)."""
    return matrix.toarray() if sp.issparse(matrix) else matrix.copy()


def _results_file(open_file: Callable[[], Recorder]) -> Recorder:
    """``open_file()``; a results file whose disk has no room stops the run with its one line."""
    try:
        return open_file()
    except ResultsFileError as exc:
        raise RunStopped(str(exc)) from None


def _evaluate(experiment: Experiment, results: Path) -> dict[str, Any]:
    """The reference problem's criteria of a finished run, also stored in the results file (attribute "J")."""
    from hybridsim.coordinator.problems import evaluate

    figures = evaluate(experiment, results)
    annotate(results, "J", figures["J"])
    annotate(results, "evaluation", {k: v for k, v in figures.items() if k != "table"})
    return figures
