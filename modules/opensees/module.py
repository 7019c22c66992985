"""The `opensees` module: an openseespy substructure driven by imposed displacements.

Trial and committed state.  OpenSees commits its domain at the end of every
converged static step, so a trial that the coordinator later discards has
already become OpenSees' committed state.  The module therefore keeps the
committed state itself, as the sequence of committed targets (the *path*),
and returns to it by rebuilding the model and replaying that path: exact for
any rate-independent model, path-dependent materials included.  A model
declared ``path_independent`` (elastic, including geometric nonlinearity)
keeps only the last committed displacement and needs no replay, because its
state is a function of the imposed displacements alone.

Non-convergence.  A step whose Newton iterations fail is retried with the
increment halved, up to ``analysis.max_substeps`` increments; if it still
fails, the model is returned to its committed state and the step is refused
with :class:`hybridsim.wire.contract.StepRefused` naming the increment and the norm.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import openseespy.opensees as ops

from hybridsim.modules.base import StepLedger
from hybridsim.wire.contract import Command, Description, Dof, ModuleError, Session, StepRefused
from hybridsim.modules.opensees import domain
from hybridsim.modules.opensees.config import CONFIG, OpenSeesSpec, parse_spec
from hybridsim.modules.opensees.imposed import ImposedDisplacementAnalysis, check_controls, dof_kind


def _encode(values: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(values, dtype="<f8").tobytes()).decode()


def _decode(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f8").copy()


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
        self._path: list[tuple[np.ndarray, int]] = []
        """committed (target, increments) since the build; path-independent models keep only the last"""
        self._trial_increments = spec.analysis.substeps
        self.stats.update({"replayed_steps": 0, "rebuilds": 0, "substepped": 0})
        self._fresh_model()
        try:
            self.dofs = tuple(Dof(c.name, dof_kind(c)) for c in spec.controls)
            self.mass = self._coordinator_mass()
        except ModuleError:
            domain.release(self)
            raise

    @classmethod
    def from_config(cls, config: Mapping[str, Any], base_dir: Path = Path(".")) -> "OpenSeesModule":
        """Build from a config table (see :mod:`hybridsim.modules.opensees.config`); paths relative to ``base_dir``."""
        return cls(parse_spec(config, Path(base_dir)))

    def describe(self) -> Description:
        return Description(kind=self.kind, dofs=self.dofs, mass=self.mass, info=dict(self._info))

    # -- the step ------------------------------------------------------------
    def _on_open(self, session: Session) -> None:
        """A module opened again starts from a freshly built model."""
        if self._path or self.stats["executed"]:
            self._path = []
            self._fresh_model()

    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        increments = self.spec.analysis.substeps
        while not self._analysis.impose(command.displacement, increments):
            reason = self._analysis.last_failure
            self._return_to_committed()
            increments *= 2
            if increments > self.spec.analysis.max_substeps:
                raise StepRefused(step, f"OpenSees did not converge ({reason}; up to "
                                        f"{self.spec.analysis.max_substeps} increments tried); the model is back "
                                        "at its last committed state")
            self.stats["substepped"] += 1
        self._trial_increments = increments
        return self._analysis.displacement(), self._analysis.force()

    def _accept(self, step: int) -> None:
        reached = self._analysis.displacement()
        if self.spec.path_independent:
            self._path = [(reached, 1)]
        else:
            self._path.append((reached, self._trial_increments))

    def _discard(self) -> None:
        """Path-dependent: rebuild and replay.  Path-independent: nothing, the next target defines the state."""
        if not self.spec.path_independent:
            self._return_to_committed()

    def _save_state(self) -> object:
        return {"targets": [_encode(t) for t, _ in self._path], "increments": [n for _, n in self._path]}

    def _load_state(self, state: object) -> None:
        try:
            targets = [_decode(t) for t in state["targets"]]  # type: ignore[index]
            increments = [int(n) for n in state["increments"]]  # type: ignore[index]
        except (KeyError, TypeError, ValueError) as exc:
            raise ModuleError(f"{self._label}: checkpoint has no valid committed path: {exc}") from exc
        if len(targets) != len(increments) or any(t.shape != (len(self.dofs),) for t in targets):
            raise ModuleError(f"{self._label}: checkpoint path does not match the module's {len(self.dofs)} DOFs")
        self._path = list(zip(targets, increments))
        self._fresh_model()
        self._replay()

    def close(self) -> dict[str, float]:
        stats = super().close()
        domain.release(self)
        return stats

    # -- the model -----------------------------------------------------------
    def _fresh_model(self) -> None:
        """(Re)build the model in the process's domain and set up the imposing analysis."""
        domain.claim(self, self._label)
        try:
            domain.build_model(self._build, self.spec.parameters, self.spec.model)
            check_controls(self.spec.controls, self._label)
        except ModuleError:
            domain.release(self)
            raise
        self._analysis = ImposedDisplacementAnalysis(self.spec.controls, self.spec.analysis)
        self._initial = self._analysis.displacement()
        self._info = {"model": str(self.spec.model), "nodes": str(len(ops.getNodeTags())),
                      "elements": str(len(ops.getEleTags())), "opensees": str(ops.version()),
                      "path_independent": str(self.spec.path_independent).lower()}
        self.stats["rebuilds"] += 1

    def _replay(self) -> None:
        for target, increments in self._path:
            if not self._analysis.impose(target, increments):
                raise ModuleError(f"{self._label}: replaying the committed path failed ({self._analysis.last_failure})")
            self.stats["replayed_steps"] += 1

    def _return_to_committed(self) -> None:
        """Bring the domain back to the committed state after a discarded or failed trial."""
        if not self.spec.path_independent:
            self._fresh_model()
            self._replay()
            return
        committed = self._path[-1][0] if self._path else self._initial
        if not self._analysis.impose(committed, self.spec.analysis.max_substeps):
            raise ModuleError(f"{self._label}: re-imposing the committed displacement failed "
                              f"({self._analysis.last_failure})")

    def _coordinator_mass(self) -> np.ndarray | None:
        """Diagonal mass the coordinator carries: per-control 'mass', or the model's nodal mass at the ties."""
        if self.spec.mass_from_model:
            carried = {place for group in self._analysis.groups for place in group}
            lost = [(n, d + 1) for n in ops.getNodeTags() for d, m in enumerate(ops.nodeMass(n))
                    if m != 0.0 and (n, d + 1) not in carried]
            if lost:
                raise ModuleError(f"{self._label}: mass_from_model: the model has mass at (node, dof) {lost[:6]} "
                                  "which no control DOF carries; make them control DOFs or remove that mass")
            return np.diag([sum(ops.nodeMass(n, d) for n, d in group) for group in self._analysis.groups])
        if any(c.mass is not None for c in self.spec.controls):
            return np.diag([c.mass or 0.0 for c in self.spec.controls])
        return None
