"""Running an experiment: start modules, pre-test, integrate, record, summarise.

One time step of the coordinator (any integrator)::

    f_{n+1} = -M r a_g(t_{n+1})
    d = integrator.predict(f_{n+1})
    while d is not None:                       # one pass for alpha-OS
        r = sum of module restoring forces at d (all modules in parallel)
        d = integrator.correct(r)
    commit the step at every module; record the row
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from coordinator.control import RunAborted, RunControl, StepListener
from coordinator.errors import RunStopped, UsageError
from coordinator.experiment import Experiment, ModuleSpec
from coordinator.integrators import INTEGRATORS, Integrator, IntegratorError
from coordinator.model import GuyanCondensation, StructuralModel, rayleigh_coefficients
from coordinator.partition import ModuleSlot, ModuleStepError, Partition
from coordinator.pretest import PretestResult, pretest
from coordinator.recorder import Recorder
from modules.base import Module, ModuleError, Session
from modules.registry import build_module


@dataclass
class RunResult:
    """The response history of a run (arrays over steps x DOFs) and its summary."""

    dofs: tuple[str, ...]
    time: np.ndarray
    displacement: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    restoring_force: np.ndarray
    initial_stiffness: np.ndarray
    summary: dict[str, Any] = field(default_factory=dict)
    output: Path | None = None

    def __getitem__(self, dof: str) -> np.ndarray:
        """Displacement history of one DOF (m or rad)."""
        return self.displacement[:, self.dofs.index(dof)]


ProgressCallback = Callable[[int, int], None]


def run_experiment(experiment: Experiment, *, output: Path | None = None, progress: ProgressCallback | None = None,
                   control: RunControl | None = None, listeners: Sequence[StepListener] = ()) -> RunResult:
    """Run ``experiment`` end to end; results stream to ``output`` (default: the experiment's).

    ``control`` lets another thread hold, resume or abort the run; each of ``listeners`` is called
    with the index of every completed step (see ``coordinator.control``).
    """
    with contextlib.ExitStack() as stack:
        slots = [_start_module(spec, stack) for spec in experiment.modules]
        run = _Run(experiment, slots, output or experiment.output, progress, control or RunControl(), listeners)
        return run.run()


def _start_module(spec: ModuleSpec, stack: contextlib.ExitStack) -> tuple[ModuleSpec, Module, str]:
    """The module of ``spec``: in process, a local daemon the coordinator starts, or a remote daemon."""
    try:
        if spec.address is None:
            return spec, build_module(spec.kind, spec.config, spec.base_dir), "in process"
        from coordinator.daemons import LocalDaemon
        from coordinator.remote import RemoteModule

        address = spec.address
        if address == "local":
            address = stack.enter_context(LocalDaemon(spec.kind, spec.config, base_dir=spec.base_dir)).address
        module = RemoteModule(address, name=spec.name, deadline_s=spec.deadline_s)
        stack.callback(module.disconnect)
        return spec, module, f"{'local daemon' if spec.address == 'local' else 'daemon'} at {address}"
    except ModuleError as exc:
        raise UsageError(f"module {spec.name!r} ({spec.kind}): {exc}") from None


class _Run:
    """The state of one run; ``run()`` is the whole test."""

    def __init__(self, experiment: Experiment, modules: list[tuple[ModuleSpec, Module, str]], output: Path,
                 progress: ProgressCallback | None, control: RunControl, listeners: Sequence[StepListener]) -> None:
        self.experiment = experiment
        self.output = output
        self.progress = progress
        self.control = control
        self.listeners = tuple(listeners)
        dofs = experiment.dofs
        lookup = {d: i for i, d in enumerate(dofs)}
        slots = []
        for spec, module, where in modules:
            try:
                description = module.describe()
            except ModuleError as exc:
                raise RunStopped(f"module {spec.name!r} ({where}) did not describe itself: {exc}") from None
            unknown = [d for d in description.dof_names if d not in lookup]
            if unknown:
                raise UsageError(f"module {spec.name!r} has DOF(s) {unknown} that are not in structure.dofs")
            index = np.array([lookup[d] for d in description.dof_names], dtype=int)
            slots.append(ModuleSlot(spec.name, module, description, index, where))
        self.partition = Partition(len(dofs), slots)
        if self.partition.unowned.size:
            names = [dofs[i] for i in self.partition.unowned]
            raise UsageError(f"structure DOF(s) {names} belong to no module; every DOF needs stiffness from a module")

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

    def _integrator(self, reduction: "_Reduction") -> Integrator:
        exp = self.experiment
        try:
            return INTEGRATORS[exp.integrator](reduction.mass, reduction.damping, reduction.stiffness, exp.dt,
                                               **exp.integrator_options)
        except IntegratorError as exc:
            raise UsageError(f"integrator: {exc}") from None

    def run(self) -> RunResult:
        exp = self.experiment
        partition = self.partition
        wall_start = time.perf_counter()
        try:
            partition.open(lambda s: Session(exp.dt, s.description.dof_names, run_id=exp.name))
            measured = pretest(partition, exp.pretest_amplitude)
            model = self._assemble_model(measured.stiffness)
            reduction = _Reduction(model, measured.stiffness, exp.condense_massless)
            integrator = self._integrator(reduction)
            integrator.start(np.zeros(reduction.ndof), np.zeros(reduction.ndof),
                             reduction.force(model.ground_load(exp.motion.at(0))), reduction.force(measured.rest_force))
            history = _History(exp.steps + 1, model.ndof, {s.name: s.ndof for s in partition.slots})
            recorder = Recorder(self.output, history.columns, dofs=exp.dofs,
                                attrs={"experiment": exp.name, "source": exp.source, "dt": exp.dt,
                                       "integrator": exp.integrator,
                                       "modules": {s.name: s.where for s in partition.slots}})
        except BaseException:
            partition.close()
            raise
        closed = False
        try:
            with recorder_closed(recorder, history) as status:
                history.put(integrator, reduction, partition, exp.motion.at(0), measured.last_step, 0.0)
                loop_wall = self._loop(recorder, history, integrator, reduction, measured.last_step, status)
                summaries, closed = partition.close(), True
                summary = _summary(exp, history, measured, loop_wall, time.perf_counter() - wall_start, summaries)
                status.completed(summary)
        finally:
            if not closed:
                partition.close()
        a = history.arrays
        return RunResult(exp.dofs, a["time"], a["displacement"], a["velocity"], a["acceleration"],
                         a["restoring_force"], measured.stiffness, summary, self.output)

    def _loop(self, recorder: Recorder, history: "_History", integrator: Integrator, reduction: "_Reduction",
              step_id: int, status: "_Status") -> float:
        """Integrate every step of the record; the wall time of the loop (s)."""
        exp, partition = self.experiment, self.partition
        load_shape = reduction.force(reduction.model.ground_load(1.0))
        ground = exp.motion.acceleration
        loop_start = time.perf_counter()
        for n in range(1, exp.steps + 1):
            try:
                self.control.gate()
            except RunAborted as exc:
                status.stopped(f"{exc} after step {n - 1}")
                raise RunStopped(f"{exc} after step {n - 1} (t = {(n - 1) * exp.dt:.6g} s); the results file "
                                 f"holds every step up to it") from None
            t0 = time.perf_counter()
            t = n * exp.dt
            try:
                step_id += 1
                trial = integrator.predict(load_shape * ground[n])
                while trial is not None:
                    force = partition.restoring_force(step_id, t, reduction.expand(trial))
                    trial = integrator.correct(reduction.force(force))
                    if trial is not None:
                        step_id += 1
                partition.commit(step_id)
            except ModuleStepError as exc:
                status.stopped(str(exc))
                raise
            except IntegratorError as exc:
                status.stopped(f"step {n}: {exc}")
                raise RunStopped(f"step {n} (t = {t:.6g} s): {exc}") from None
            history.put(integrator, reduction, partition, ground[n], step_id, time.perf_counter() - t0)
            if n % RECORD_BLOCK == 0:
                recorder.write(history.arrays, history.rows)
            for listener in self.listeners:
                listener(n, history.arrays)
            if self.progress is not None:
                self.progress(n, exp.steps)
        return time.perf_counter() - loop_start


class _Reduction:
    """The DOFs the integrator works on: all of them, or the DOFs with mass (Guyan condensation).

    With condensation, u = T u_r (T from the initial stiffness: the massless DOFs are in static
    equilibrium under K_I), the reduced matrices are T^T A T and a force f reduces to T^T f.  Exact
    for a linear structure without damping on the massless DOFs; for a nonlinear one the massless
    DOFs follow the linear recovery.
    """

    def __init__(self, model: StructuralModel, stiffness: np.ndarray, condense: bool) -> None:
        self.model = model
        massive = np.flatnonzero(np.diag(model.mass) > 0)
        if condense and massive.size < model.ndof:
            guyan = GuyanCondensation(stiffness, massive)
            self.transform: np.ndarray | None = guyan.transform
            self.retained = massive
            self.mass, self.damping = guyan.condense(model.mass), guyan.condense(model.damping)
            self.stiffness = guyan.stiffness
        else:
            self.transform, self.retained = None, np.arange(model.ndof)
            self.mass, self.damping, self.stiffness = model.mass, model.damping, stiffness
        self.ndof = self.retained.size

    def expand(self, reduced: np.ndarray) -> np.ndarray:
        """Values on all DOFs from the integrator's DOFs."""
        return reduced if self.transform is None else self.transform @ reduced

    def force(self, force: np.ndarray) -> np.ndarray:
        """A force on all DOFs as the integrator sees it."""
        return force if self.transform is None else self.transform.T @ force

    def place(self, reduced: np.ndarray) -> np.ndarray:
        """A reduced force on the retained DOFs, zero elsewhere (for the record)."""
        if self.transform is None:
            return reduced
        full = np.zeros(self.model.ndof)
        full[self.retained] = reduced
        return full


RECORD_BLOCK = 1024
"""steps between writes to the results file"""


class _History:
    """Preallocated in-memory response arrays (steps x width), one per results dataset."""

    def __init__(self, rows: int, ndof: int, modules: dict[str, int]) -> None:
        self.columns: dict[str, int] = {"time": 0, "step_id": 0, "ground_acceleration": 0, "wall_step_s": 0,
                                        "displacement": ndof, "velocity": ndof, "acceleration": ndof,
                                        "restoring_force": ndof}
        for name, width in modules.items():
            self.columns[f"modules/{name}/displacement"] = width
            self.columns[f"modules/{name}/force"] = width
        self.arrays = {key: np.zeros((rows, width) if width else rows, dtype=np.int64 if key == "step_id" else float)
                       for key, width in self.columns.items()}
        self._modules = [(self.arrays[f"modules/{name}/displacement"], self.arrays[f"modules/{name}/force"])
                         for name in modules]
        self.rows = 0

    def put(self, integrator: Integrator, reduction: "_Reduction", partition: Partition, ground: float, step_id: int,
            wall: float) -> None:
        """Row n = integrator.step: the committed state (on all DOFs) and what every module measured."""
        n, a = integrator.step, self.arrays
        a["time"][n] = n * integrator.dt
        a["step_id"][n] = step_id
        a["ground_acceleration"][n] = ground
        a["wall_step_s"][n] = wall
        a["displacement"][n] = reduction.expand(integrator.displacement)
        a["velocity"][n] = reduction.expand(integrator.velocity)
        a["acceleration"][n] = reduction.expand(integrator.acceleration)
        a["restoring_force"][n] = reduction.place(integrator.restoring_force)
        for (disp, force), result in zip(self._modules, partition.last_results):
            disp[n] = result.displacement
            force[n] = result.force
        self.rows = n + 1


class _Status:
    def __init__(self) -> None:
        self.text = "stopped: interrupted"
        self.summary: dict[str, Any] | None = None

    def stopped(self, reason: str) -> None:
        self.text = f"stopped: {reason}"

    def completed(self, summary: dict[str, Any]) -> None:
        self.text, self.summary = "completed", summary


@contextlib.contextmanager
def recorder_closed(recorder: Recorder, history: _History) -> Iterator[_Status]:
    """Write every completed row and close the recorder with the run's final status, however the run ends."""
    status = _Status()
    try:
        yield status
    except BaseException as exc:
        if status.text == "stopped: interrupted" and not isinstance(exc, KeyboardInterrupt):
            status.stopped(f"{type(exc).__name__}: {exc}")
        raise
    finally:
        recorder.write(history.arrays, history.rows)
        recorder.close(status.text, status.summary)


def _summary(exp: Experiment, history: _History, measured: PretestResult, loop_wall: float, total_wall: float,
             modules: dict[str, dict[str, float]]) -> dict[str, Any]:
    disp = history.arrays["displacement"][: history.rows]
    time_s = history.arrays["time"]
    peaks = np.max(np.abs(disp), axis=0)
    at = np.argmax(np.abs(disp), axis=0)
    return {
        "experiment": exp.name,
        "integrator": exp.integrator,
        "dt_s": exp.dt,
        "steps": history.rows - 1,
        "simulated_s": float(time_s[history.rows - 1]),
        "wall_s": total_wall,
        "loop_wall_s": loop_wall,
        "steps_per_second": (history.rows - 1) / loop_wall if loop_wall > 0 else float("inf"),
        "pretest_asymmetry": measured.asymmetry,
        "peak_displacement": {d: float(p) for d, p in zip(exp.dofs, peaks)},
        "peak_time_s": {d: float(time_s[i]) for d, i in zip(exp.dofs, at)},
        "modules": modules,
    }


class ProgressBar:
    """A one-line progress bar on a stream (stderr), redrawn at most ten times a second."""

    def __init__(self, stream: Any = sys.stderr, width: int = 30) -> None:
        self.stream, self.width, self._last = stream, width, 0.0
        self._start = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        filled = int(self.width * done / max(total, 1))
        rate = done / max(now - self._start, 1e-9)
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} steps, {rate:,.0f} steps/s")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()
