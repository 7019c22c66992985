"""The `opensees` module: an openseespy substructure driven by imposed displacements.

Trial and committed state.  OpenSees commits its domain at the end of every
converged static step and cannot go back (docs/opensees.md says why no
OpenSees means does), so:

- a model declared ``path_independent`` (elastic, including geometric
  nonlinearity) runs in this process and keeps only the last committed
  displacement: its state is a function of the imposed displacements, so a
  discarded trial is undone by imposing that displacement again;
- a path-dependent model runs in a worker process whose committed state is a
  frozen fork of it (:mod:`hybridsim.modules.opensees.forked`): a discard hands
  over to a copy of the committed state, at the same cost at every step.

This process also builds the model once, for its description (DOF kinds,
mass, info) and so that a bad model fails at construction.  A checkpoint of
a path-dependent model names its committed path, which the site keeps on its
disk (:mod:`.path`), and the worker keeps a frozen copy of that state: a
restore in the site process that took the checkpoint takes the copy up
(milliseconds, also in the module the site builds for a resumed session, see
:mod:`.forked`); anywhere else it replays the path in a fresh worker.

Non-convergence.  A step whose Newton iterations fail is retried with the
increment halved, up to ``analysis.max_substeps`` increments; if it still
fails, the model is returned to its committed state and the step is refused
with :class:`hybridsim.wire.contract.StepRefused` naming the increment and the norm.
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.base import StepLedger
from hybridsim.modules.dynamic import DynamicModule
from hybridsim.wire.contract import FORCE_CONTROLLED, UNIT_OF_KIND, Command, Description, Dof, ModuleError, Record, Session, StepRefused
from hybridsim.modules.opensees import domain, forked
from hybridsim.modules.opensees.built import BuiltModel
from hybridsim.modules.opensees.config import CONFIG, ControlDof, OpenSeesSpec, parse_spec
from hybridsim.modules.opensees.forked import ForkedModel
from hybridsim.modules.opensees.imposed import dof_kind
from hybridsim.modules.opensees.path import CommittedPath, remove_expired
from hybridsim.modules.opensees.lazy import ops

log = logging.getLogger(__name__)


def _encode(values: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(values, dtype="<f8").tobytes()).decode()


def _decode(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f8").copy()


def _kept_key(state: dict) -> tuple:
    """What names a checkpoint's committed state: its path file, rows and digest."""
    return state["path_file"], state["rows"], state["sha256"]


class OpenSeesModule(StepLedger):
    """Restoring forces of an openseespy model at its control DOFs (N, N*m; d in m, rad).

    The model is built at construction (so a bad model file fails early) and
    this object holds the process's OpenSees domain until :meth:`close`.
    """

    kind = "opensees"
    CONFIG = CONFIG

    def __init__(self, spec: OpenSeesSpec) -> None:
        super().__init__()
        self.spec = spec
        self._label = f"opensees module ({spec.model.name})"
        self._build = domain.load_builder(spec.model)
        self._last: np.ndarray | None = None
        """path-independent: the last committed displacement (m, rad)"""
        self._committed: CommittedPath | None = None
        """path-dependent: every committed (target, increments) of the session, in a file on the site's disk"""
        self._trial_increments = spec.analysis.substeps
        self._worker: ForkedModel | None = None
        self._snapshots = False
        """whether commits keep a copy of the committed state (from the first discard that found none)"""
        self._reached: tuple[np.ndarray, np.ndarray] | None = None
        self._force_reached = np.zeros(len(spec.forces))
        """what the force-controlled DOFs reached in the trial (m, rad)"""
        self.force_dofs = len(spec.forces)
        self._forces = np.array([f.force for f in spec.forces])
        """the committed force targets (N, N*m): the declared ones until a lab protocol's client commands others"""
        self._trial_forces = self._forces
        self._histories = any(f.history is not None for f in spec.forces)
        self._force_rows: list[np.ndarray] = []
        self._force_first = 0
        """the row of the ``force_control`` record that ``_force_rows[0]`` is"""
        self._finished = False
        """the run this session served completed (:meth:`finish`)"""
        self._named = False
        """a checkpoint names the committed-path file (one taken here, or the one restored): a resume may need it"""
        if not spec.path_independent:
            expired = remove_expired(spec.resume.path_files_s)
            if expired:
                log.info("%s: deleted %d committed-path files untouched for more than %g s (resume.path_files_s)",
                         self._label, len(expired), spec.resume.path_files_s)
        self.stats.update({"replayed_steps": 0, "rebuilds": 0, "substepped": 0, "restores_from_copy": 0,
                           "restores_by_replay": 0, "kept_copy_failures": 0, "restore_s": 0.0})
        self._fresh_model()
        try:
            self.dofs = tuple(Dof(c.name, dof_kind(c)) for c in spec.controls)
            self.mass = self._model.coordinator_mass()
        except ModuleError:
            self._drop_models()
            raise

    @classmethod
    def from_config(cls, config: Mapping[str, Any], base_dir: Path = Path(".")) -> "OpenSeesModule | DynamicModule":
        """Build from a config table (see :mod:`hybridsim.modules.opensees.config`); paths relative to ``base_dir``.
        With a ``dynamic`` table: the dynamic module of :mod:`.dynamic` (docs/dynamic_modules.md)."""
        if "dynamic" in config:
            from hybridsim.modules.opensees.dynamic import dynamic_module

            return dynamic_module(parse_spec(config, Path(base_dir)), config["dynamic"], Path(base_dir))
        return cls(parse_spec(config, Path(base_dir)))

    def describe(self) -> Description:
        info = dict(self._info)
        if self.spec.forces:
            info[FORCE_CONTROLLED] = ",".join(f.name for f in self.spec.forces)
        return Description(kind=self.kind, dofs=self.dofs, mass=self.mass, info=info)

    def _check(self, step: int, command: Command) -> None:
        """A force command (a lab protocol's client) reaches a path-independent model, within its limits."""
        if command.force is None:
            return
        if self._worker is not None:
            raise StepRefused(step, "force commands need path_independent = true (a path-dependent model's "
                                    "committed path keeps displacements only): command displacements")
        for f, value in zip(self.spec.forces, command.force):
            if f.limit is not None and abs(value) > f.limit:
                raise StepRefused(step, f"force command {value:.6g} at {f.name!r} beyond its limit {f.limit:.6g} "
                                        f"(force_control[].limit); nothing was applied")

    # -- the step ------------------------------------------------------------
    def _on_open(self, session: Session) -> None:
        """A module opened again starts from a freshly built model.  An iterating scheme's commits keep a copy
        for its discards from the first step."""
        self._snapshots = self._snapshots or session.iterating
        self._finished = False
        self._force_rows, self._force_first = [], 0
        self._forces = self._trial_forces = np.array([f.force for f in self.spec.forces])
        if self._last is not None or self._committed is not None or self.stats["executed"]:
            self._last = None
            self._drop_path()
            self._fresh_model()

    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        increments = self.spec.analysis.substeps
        self._trial_forces = self._forces if command.force is None else command.force
        if command.force is None and self._histories:
            self._trial_forces = np.array([f.at(command.time) for f in self.spec.forces])
        while not self._impose(command.displacement, increments):
            reason = self._last_failure
            self._return_to_committed()
            increments *= 2
            if increments > self.spec.analysis.max_substeps:
                raise StepRefused(step, f"OpenSees did not converge ({reason}; up to "
                                        f"{self.spec.analysis.max_substeps} increments tried); the model is back "
                                        "at its last committed state")
            self.stats["substepped"] += 1
        self._trial_increments = increments
        assert self._reached is not None
        return self._reached

    def records(self, since: int = 0, final: bool = True) -> list[Record]:
        """The force-controlled DOFs' streamed record ``force_control``: per committed step, the displacement each
        reached (m, rad) and its force target (N, N*m); none without force control."""
        forces = self.spec.forces
        if not forces:
            return []
        start = max(since, self._force_first)
        self._force_rows, self._force_first = self._force_rows[start - self._force_first:], start
        units = [UNIT_OF_KIND[dof_kind(ControlDof(f.name, f.node, f.dof))] for f in forces]
        values = np.array(self._force_rows, dtype=float).reshape(len(self._force_rows), 2 * len(forces))
        return [Record("force_control", values, (*(u[0] for u in units), *(u[1] for u in units)),
                       (*(f"{f.name}/displacement" for f in forces), *(f"{f.name}/force" for f in forces)),
                       "the force-controlled DOFs: the displacement reached under the held target", start)]

    def _accept(self, step: int) -> None:
        assert self._reached is not None
        if self.spec.forces:
            self._force_rows.append(np.concatenate([self._force_reached, self._trial_forces]))
            self._forces = self._trial_forces
        reached = self._reached[0]
        if self._worker is None:
            self._last = reached
            return
        self._worker.commit(snapshot=self._snapshots)
        if self._committed is None:
            self._committed = CommittedPath(len(self.dofs))
        self._committed.append(reached, self._trial_increments)

    def _discard(self) -> None:
        """Path-dependent: a copy of the committed state takes over.  Path-independent: nothing, the next
        target defines the state."""
        if self._worker is not None:
            self._return_to_committed()

    def _save_state(self) -> object:
        """Path-independent: the last committed displacement.  Path-dependent: a reference to the committed
        path on the site's disk (:mod:`.path`), of bounded size; the worker keeps a copy of the committed state
        for a restore of this checkpoint (none while a trial is open)."""
        if self._committed is not None:
            state = {**self._committed.checkpoint(), "force_rows": self._force_first + len(self._force_rows)}
            self._named = True
            trial_open = self._executed is not None and self._executed.step != self._committed_step
            if self._worker is not None and not trial_open:
                self._worker.keep(_kept_key(state), self._committed.running_digest())
            return state
        last = [] if self._last is None else [self._last]
        return {"targets": [_encode(t) for t in last], "increments": [1] * len(last), "forces": self._forces.tolist(),
                "force_rows": self._force_first + len(self._force_rows)}

    def _load_state(self, state: object) -> None:
        started = time.perf_counter()
        self._force_rows, self._force_first = [], int(state.get("force_rows", 0)) if isinstance(state, dict) else 0
        if isinstance(state, dict) and "path_file" in state:
            if self._worker is None:
                raise ModuleError(f"{self._label}: a path-dependent model's checkpoint cannot restore a model "
                                  "declared path_independent")
            self._drop_path()
            why = self._take_up(state)
            self._named = True
            if why is None:
                self._restored("from a kept copy of the worker (nothing replayed)", started, "restores_from_copy")
                return
            self._committed = CommittedPath.reopen(state, len(self.dofs), self._label)
        else:
            why = "the checkpoint carries the path"
            targets, increments = self._path_in(state)
            self._drop_path()
            self._last = targets[-1] if len(targets) else None
            self._forces = self._trial_forces = np.array(state.get("forces", self._forces), float)
            if not self.spec.path_independent and len(targets):
                self._committed = CommittedPath(len(self.dofs))
                for target, n in zip(targets, increments):
                    self._committed.append(target, n)
        self._fresh_model()
        self._replay()
        rows = self._committed.rows if self._committed is not None else 0
        self._restored(f"by replaying {rows} committed steps in a fresh worker ({why})" if self._worker is not None
                       else "by imposing the committed displacement", started, "restores_by_replay")

    def _take_up(self, state: dict) -> str | None:
        """None when a copy of the checkpoint ``state`` kept by this module's worker family, or by a family an
        earlier module of this process parked, now is the worker (with the committed path cut back to it); else
        why not (the restore replays)."""
        assert self._worker is not None
        key = _kept_key(state)
        family = forked.adopt(key, self.spec, self._worker)
        if family is None:
            return "no kept copy of this checkpoint in this process"
        try:
            self._committed = CommittedPath.reopen(state, len(self.dofs), self._label,
                                                   running=family.kept[key].memo)
        except ModuleError:
            if family is not self._worker:
                family.close(wait=False)
            raise
        try:
            taken = family.take_up(key)
        except ModuleError as exc:             # the family is ended: a fresh worker replays
            log.warning("%s: the kept copy of the checkpoint failed (%s); replaying the committed path instead",
                        self._label, exc)
            self.stats["kept_copy_failures"] += 1
            self._drop_path()
            return f"its kept copy failed: {exc}"
        if not taken:
            if family is not self._worker:
                family.close(wait=False)
            self._drop_path()
            return "its kept copy had exited"
        if family is not self._worker:
            self._worker.close(wait=False)
            self._worker = family
        return None

    def _restored(self, how: str, started: float, counter: str) -> None:
        self.stats[counter] += 1
        self.stats["restore_s"] = time.perf_counter() - started
        log.info("%s: checkpoint restored %s in %.3f s", self._label, how, self.stats["restore_s"])

    def _path_in(self, state: object) -> tuple[list[np.ndarray], list[int]]:
        """A committed path carried in the checkpoint itself (path-independent models; earlier checkpoints)."""
        try:
            targets = [_decode(t) for t in state["targets"]]  # type: ignore[index]
            increments = [int(n) for n in state["increments"]]  # type: ignore[index]
        except (KeyError, TypeError, ValueError) as exc:
            raise ModuleError(f"{self._label}: checkpoint has no valid committed path: {exc}") from exc
        if len(targets) != len(increments) or any(t.shape != (len(self.dofs),) for t in targets):
            raise ModuleError(f"{self._label}: checkpoint path does not match the module's {len(self.dofs)} DOFs")
        return targets, increments

    def _drop_path(self) -> None:
        if self._committed is not None:
            self._committed.close()
            self._committed = None
        self._named = False

    def finish(self) -> None:
        """The run this session served completed (:func:`hybridsim.wire.contract.finish_run`): what was kept only
        for resuming it ends at :meth:`close`: the worker's kept copies (not parked), the families parked for the
        same committed path, and the committed-path file."""
        self._finished = True

    def close(self) -> dict[str, float]:
        """End the session; a run that did not complete leaves its kept copies parked and its committed-path
        file for a resume (the file only if a checkpoint names it: else no resume can use it)."""
        stats = super().close()
        self._drop_models(park=not self._finished)
        if self._committed is not None and (self._finished or not self._named):
            name = self._committed.name
            forked.end_parked(lambda key: key[0] == name)
            self._committed.delete()
        elif self._committed is not None:
            log.info("%s: the stopped run's committed path stays in %s for a resume (deleted once untouched for "
                     "%g s: resume.path_files_s)", self._label, self._committed.folder / self._committed.name,
                     self.spec.resume.path_files_s)
        self._drop_path()
        return stats

    # -- the model -----------------------------------------------------------
    def _fresh_model(self) -> None:
        """(Re)build the model in this process's domain and, for a path-dependent model, in a new worker."""
        domain.claim(self, self._label)
        try:
            self._model = BuiltModel(self.spec, self._build, self._label)
        except ModuleError:
            domain.release(self)
            raise
        self._initial = self._model.initial
        self._info = dict(self._model.info)
        if self._worker is not None:
            self._worker.release()
            self._worker = None
        if not self.spec.path_independent:
            self._worker = ForkedModel(self.spec, self._label, self.spec.resume.kept_copies_s)
        self.stats["rebuilds"] += 1

    def _drop_models(self, park: bool = True) -> None:
        """Give back the domain and the worker family (parked while it keeps copies, unless not ``park``)."""
        if self._worker is not None:
            if park:
                self._worker.release()
            else:
                self._worker.close()
            self._worker = None
        domain.release(self)

    def _impose(self, target: np.ndarray, increments: int) -> bool:
        """Impose ``target`` on the model that steps (the worker's or this process's); keep what it reached."""
        if self._worker is not None:
            converged, self._last_failure, *reached = self._worker.impose(target, increments)
        else:
            converged = self._model.impose(target, increments, self._trial_forces)
            self._last_failure = "" if converged else self._model.last_failure
            reached = list(self._model.reached())
        self._reached, self._force_reached = (reached[0], reached[1]), reached[2]
        return converged

    def _replay(self) -> None:
        """Bring the freshly built model to the committed state (a restore, or a discard that found no copy)."""
        if self._worker is not None and self._committed is not None and self._committed.rows:
            targets, increments = self._committed.read()
            self._worker.replay(targets, increments)
            self.stats["replayed_steps"] += len(targets)
        elif self._worker is None and self._last is not None:
            if not self._model.impose(self._last, 1, self._forces):
                raise ModuleError(f"{self._label}: re-imposing the committed displacement failed "
                                  f"({self._model.last_failure})")
            self.stats["replayed_steps"] += 1

    def _return_to_committed(self) -> None:
        """Bring the model back to the committed state after a discarded or failed trial."""
        if self._worker is not None:
            if not self._worker.discard():   # committed without a copy: rebuild once, keep copies from now on
                self._snapshots = True
                self._worker.release()
                self._worker = ForkedModel(self.spec, self._label, self.spec.resume.kept_copies_s)
                self.stats["rebuilds"] += 1
                self._replay()
            return
        committed = self._initial if self._last is None else self._last
        if not self._model.impose(committed, self.spec.analysis.max_substeps, self._forces):
            raise ModuleError(f"{self._label}: re-imposing the committed displacement failed "
                              f"({self._model.last_failure})")
