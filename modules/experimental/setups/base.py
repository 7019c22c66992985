"""The setup interface: control DOFs <-> actuator strokes and load cells, in the rig's current configuration.

Units: DOF displacements in m and rad, strokes in m (the change of an actuator's
length from rest, extension positive), load-cell forces in N (along the actuator,
pushing the specimen positive), DOF forces in N and N*m.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hybridsim.wire.contract import Dof, ModuleError

MAX_ITERATIONS = 25
"""default limit of the Newton inverse"""
TOLERANCE = 1e-14
"""default bound on the last Newton correction, max |dq| (m, rad)"""


class SetupError(ModuleError):
    """A setup's configuration is wrong; the message names the key and the fix."""


class UnreachablePose(ModuleError):
    """No pose of the rig gives the strokes asked for (or a pose needs strokes beyond an actuator's range)."""


def numbers(table: Mapping[str, Any], key: str, kind: str, count: int | None = None,
                positive: bool = False) -> np.ndarray:
    """``table[key]`` as a float vector (``count`` entries if given), finite (and > 0 if ``positive``)."""
    try:
        values = np.atleast_1d(np.asarray(table[key], float))
    except (TypeError, ValueError):
        raise SetupError(f"setup {kind!r}: {key} must be numbers, not {table[key]!r}") from None
    if values.ndim != 1 or (count is not None and values.size != count):
        raise SetupError(f"setup {kind!r}: {key} must be {count} numbers, got {np.shape(table[key])}")
    if not np.all(np.isfinite(values)) or (positive and not np.all(values > 0)):
        raise SetupError(f"setup {kind!r}: {key} must be finite{' and positive' if positive else ''}: {table[key]!r}")
    return values


class Setup(abc.ABC):
    """A rig between ``dofs`` and ``actuators`` strokes; subclasses give the geometry."""

    kind: str = ""
    dofs: tuple[Dof, ...] = ()
    actuators: int = 0
    tolerance: float = TOLERANCE
    max_iterations: int = MAX_ITERATIONS

    def __init__(self) -> None:
        self.iterations = 0
        """Newton iterations of the last :meth:`pose` (0: closed form)"""
        self._rest_inverse: np.ndarray | None = None

    @abc.abstractmethod
    def strokes(self, q: np.ndarray) -> np.ndarray:
        """Forward map: the strokes (m) that put the DOFs at ``q`` (m, rad), exact."""

    @abc.abstractmethod
    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """d strokes / d q at ``q`` (actuators x DOFs; 1 or m per rad)."""

    def strokes_and_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(strokes(q), jacobian(q)); a subclass may compute them together."""
        return self.strokes(q), self.jacobian(q)

    def pose(self, strokes: np.ndarray) -> np.ndarray:
        """Inverse map: the DOFs (m, rad) of measured ``strokes`` (m); Newton unless a subclass has a closed form."""
        return self.newton(np.asarray(strokes, float))

    @property
    def cells(self) -> int:
        """How many load-cell readings the rig's force map takes (the actuators' unless a kind reads others)."""
        return self.actuators

    @property
    def actuator_cells(self) -> bool:
        """Whether the first ``actuators`` readings are the actuators' own load cells (their limits apply)."""
        return True

    def cell_jacobian(self, q: np.ndarray) -> np.ndarray:
        """cells x DOFs: the virtual displacement each load-cell reading works through at ``q`` (the actuators'
        strokes by default; a kind with rods or braces adds or replaces rows)."""
        return self.jacobian(q)

    def dof_forces(self, q: np.ndarray, loads: np.ndarray) -> np.ndarray:
        """DOF forces (N, N*m) of load-cell readings ``loads`` (N; ``cells`` of them) at ``q``: C(q)^T loads,
        C the :meth:`cell_jacobian` (virtual work)."""
        return self.cell_jacobian(np.asarray(q, float)).T @ np.asarray(loads, float)

    def newton(self, strokes: np.ndarray, guess: np.ndarray | None = None) -> np.ndarray:
        """Solve strokes(q) = ``strokes`` for q by Newton's method from ``guess`` (default: the linearised solution
        at rest); refuse if it does not converge or (as many actuators as DOFs) converges off the strokes.  With
        more actuators than DOFs it is Gauss-Newton: the pose that fits redundant (noisy) strokes best."""
        if strokes.shape != (self.actuators,) or not np.all(np.isfinite(strokes)):
            raise UnreachablePose(f"setup {self.kind!r}: give {self.actuators} finite strokes, not {strokes!r}")
        if guess is not None:
            q = np.array(guess, float)
        else:
            if self._rest_inverse is None:
                self._rest_inverse = np.linalg.pinv(self.jacobian(np.zeros(len(self.dofs))))
            q = self._rest_inverse @ strokes
        step = np.inf
        for iteration in range(1, self.max_iterations + 1):
            forward, jacobian = self.strokes_and_jacobian(q)
            residual = forward - strokes
            try:
                correction = (np.linalg.solve(jacobian, residual) if jacobian.shape[0] == jacobian.shape[1]
                              else np.linalg.lstsq(jacobian, residual, rcond=None)[0])
            except np.linalg.LinAlgError:
                break
            q = q - correction
            step = float(np.max(np.abs(correction)))
            if not np.all(np.isfinite(q)):
                break
            if step <= self.tolerance * max(1.0, float(np.max(np.abs(q)))):
                self.iterations = iteration
                misfit = float(np.max(np.abs(self.strokes(q) - strokes)))
                if self.actuators == len(self.dofs) and misfit > 1e3 * self.tolerance * max(1.0, float(np.max(np.abs(strokes)))):
                    raise UnreachablePose(f"setup {self.kind!r}: no pose gives the strokes {_mm(strokes)} mm "
                                          f"(the nearest is {misfit * 1e3:.3g} mm off)")
                return q
        self.iterations = self.max_iterations
        raise UnreachablePose(f"setup {self.kind!r}: no pose found for the strokes {_mm(strokes)} mm: Newton did not "
                              f"converge in {self.max_iterations} iterations (last correction {step:.3g}); the pose "
                              "is out of the rig's reach")

    @classmethod
    @abc.abstractmethod
    def from_config(cls, table: Mapping[str, Any]) -> Setup:
        """The setup of a config table whose keys ``CONFIG`` (the class's declaration) has checked."""


def _mm(strokes: Sequence[float]) -> str:
    return "[" + ", ".join(f"{1e3 * s:.4g}" for s in strokes) + "]"
