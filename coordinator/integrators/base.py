"""The integrator interface: one time step of M a + C v + r(d) = f over the condensed DOFs.

A step is driven by the coordinator as::

    d = integrator.predict(load_next)        # first trial displacement of step n+1
    while d is not None:
        r = modules.restoring_force(d)        # propose + execute at every module
        d = integrator.correct(r)             # None when step n+1 is complete

Explicit and operator-splitting schemes need one evaluation per step;
iterative (implicit) schemes ask for further trials until they converge.

A step allocates no arrays: the trial returned by ``predict`` / ``correct`` is
the integrator's own buffer, valid until the next call (the caller copies
what it keeps), and the committed state (``displacement``, ``velocity``,
``acceleration``, ``restoring_force``, ``load``) is updated in place;
:meth:`Integrator.state` returns copies.
Units: d in m (rad), v in m/s, a in m/s^2, forces in N (N*m).
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from hybridsim.coordinator.integrators.factor import Factor, FactorError, is_sparse, structural
from hybridsim.modules.config_schema import ConfigError, Schema


class IntegratorError(RuntimeError):
    """An integrator cannot continue (ill-posed matrices, no convergence); the message says why."""


def factor(matrix: np.ndarray | sp.spmatrix, name: str) -> Factor:
    """An effective matrix factored once (LAPACK's LU, or SuperLU if it is sparse), refused when it is singular
    or not finite."""
    try:
        return Factor(matrix)
    except FactorError as exc:
        raise IntegratorError(f"{name}: the effective matrix {exc}") from None


def factor_once(matrix: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """LU factors of a dense effective matrix (LAPACK's getrf), refused when it is singular or not finite."""
    return factor(np.asarray(matrix), name).lu


def require_mass(mass: np.ndarray | sp.spmatrix, scheme: str) -> None:
    """Refuse a mass matrix that is not positive definite: an explicit scheme solves for a at every DOF.

    A sparse mass is checked by its diagonal (every entry > 0); its factor refuses what is singular."""
    fix = (f"{scheme}: an explicit scheme needs mass at every DOF; set structure.condense_massless = true "
           f"(Guyan condensation of the massless DOFs) or use alpha-OS")
    if is_sparse(mass):
        if np.min(mass.diagonal()) <= 0.0:
            raise IntegratorError(fix)
    elif np.min(np.linalg.eigvalsh(np.asarray(mass, float))) <= 0.0:
        raise IntegratorError(fix)


def highest_omega(stiffness: np.ndarray, mass: np.ndarray) -> float:
    """The highest natural circular frequency of K, M (rad/s)."""
    return float(np.sqrt(np.max(np.abs(scipy.linalg.eigvals(stiffness, mass)))))


def check_stable(scheme: str, dt: float, stiffness: np.ndarray, mass: np.ndarray, limit: float, limit_text: str,
                 hint: str = "") -> None:
    """Refuse a step past a conditionally stable scheme's limit omega_max dt <= ``limit`` (``limit_text``: how its
    paper writes it), in one line naming the shortest period, the limit and the dt to use."""
    omega = highest_omega(stiffness, mass)
    if dt * omega > limit:
        raise IntegratorError(
            f"{scheme} is unstable at dt = {dt:g} s: the shortest period T = {2.0 * np.pi / omega:.4g} s "
            f"(omega = {omega:.4g} rad/s) needs dt <= {limit_text}/omega = {limit / omega:.4g} s "
            f"(omega dt <= {limit:.4g}); set dt to {limit / omega:.4g} s or less (or use alpha-os{hint})")


class Integrator(abc.ABC):
    """State (d, v, a, r) at the last completed step and the step from n to n+1."""

    name: str = ""
    takes_back_trials: ClassVar[bool] = False
    """an iterative scheme: the modules take back every trial of a step but the last (the session says so)"""
    CONFIG: ClassVar[Schema] = Schema("integrator", "A scheme without options.")
    """the scheme's options, declared once: keyword arguments of the constructor and keys of ``[integrator]``
    (:mod:`hybridsim.modules.config_schema`); the experiment validates ``[integrator]`` with it before
    anything runs and the constructor checks its arguments with it"""
    sparse: ClassVar[bool] = False
    """the scheme takes sparse M, C and K_I (scipy.sparse; factored by SuperLU) as well as dense ones"""

    @classmethod
    def check_options(cls, **options: Any) -> None:
        """Refuse options the scheme does not declare or cannot take (IntegratorError naming integrator.KEY)."""
        try:
            cls.CONFIG.check(options, "integrator")
        except ConfigError as exc:
            raise IntegratorError(str(exc)) from None

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float) -> None:
        if not (dt > 0 and np.isfinite(dt)):
            raise IntegratorError(f"time step must be a positive number of seconds, got {dt}")
        if not self.sparse and any(is_sparse(m) for m in (mass, damping, initial_stiffness)):
            raise IntegratorError(f"{self.name} takes dense matrices only; a sparse structure runs under "
                                  f"alpha-os, generalized-alpha-os, kr-alpha or cr")
        self.mass = structural(mass)
        self.damping = structural(damping)
        self.initial_stiffness = structural(initial_stiffness)
        self.dt = float(dt)
        n = self.mass.shape[0]
        self.displacement = np.zeros(n)
        self.velocity = np.zeros(n)
        self.acceleration = np.zeros(n)
        self.restoring_force = np.zeros(n)
        self.load = np.zeros(n)
        self._next_load = np.zeros(n)
        self.step = 0

    def start(self, displacement: np.ndarray, velocity: np.ndarray, load: np.ndarray,
              restoring_force: np.ndarray) -> None:
        """Set the initial state; the acceleration follows from equilibrium M a0 = f0 - C v0 - r0.

        Massless DOFs must be in static equilibrium at the start (their rows
        are solved in the least-squares sense).
        """
        self.displacement = np.array(displacement, float)
        self.velocity = np.array(velocity, float)
        self.load = np.array(load, float)
        self.restoring_force = np.array(restoring_force, float)
        residual = self.load - self.damping @ self.velocity - self.restoring_force
        self.acceleration = (np.zeros_like(residual) if not np.any(residual) else _initial_acceleration(self.mass, residual))
        self.step = 0

    @abc.abstractmethod
    def predict(self, load: np.ndarray) -> np.ndarray:
        """Begin step n+1 under the external load f_{n+1} (N); return the first trial displacement."""

    @abc.abstractmethod
    def correct(self, restoring_force: np.ndarray) -> np.ndarray | None:
        """Take the modules' restoring force at the last trial; return the next trial or None when done."""

    def _take_load(self, load: np.ndarray) -> None:
        """Keep f_{n+1} (N) for the step begun by ``predict`` (a copy: the caller may reuse its array)."""
        self._next_load[...] = load

    def _commit_step(self) -> None:
        """Step n+1 is complete: f_{n+1} becomes the committed load."""
        self.load[...] = self._next_load
        self.step += 1

    def state(self) -> dict[str, np.ndarray]:
        """The committed state, for checkpoints."""
        return {"displacement": self.displacement.copy(), "velocity": self.velocity.copy(),
                "acceleration": self.acceleration.copy(), "restoring_force": self.restoring_force.copy(),
                "load": self.load.copy(), "step": np.array(self.step)}

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        """Return to a state given by :meth:`state` (a checkpoint)."""
        for key in ("displacement", "velocity", "acceleration", "restoring_force", "load"):
            setattr(self, key, np.array(state[key], float))
        self.step = int(state["step"])


def _initial_acceleration(mass: np.ndarray | sp.csr_matrix, residual: np.ndarray) -> np.ndarray:
    """a0 of M a0 = residual in the least-squares sense (a massless DOF gets 0; its row must be in equilibrium)."""
    if not is_sparse(mass):
        return np.linalg.lstsq(mass, residual, rcond=None)[0]
    massive = np.flatnonzero(mass.getnnz(axis=1))
    out = np.zeros_like(residual)
    out[massive] = Factor(mass[massive][:, massive]).solve(residual[massive].copy())
    return out
