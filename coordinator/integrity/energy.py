"""Energy indicators updated once a step in O(1): a site's energy error and the structure's energy balance.

Energy error (Mosqueda, Stojadinovic & Mahin 2007, J. Struct. Eng. 133(8), "Real-time error monitoring for
hybrid simulation. Part I: Methodology and experimental verification", Part II: "Structural response
modification due to errors"): the work of the measured interface force on the error between measured and
commanded displacement,

    E_err(t) = integral f_m . d(x_m - x_c)                              [J]

positive when the transfer system adds energy to the structure (an actuator lag tau on a spring k driven by
x_c = A sin(w t) adds pi k A^2 sin(w tau) a cycle), reported against the input energy E_in.

Energy balance (Uang & Bertero 1990, relative form) with every integral by the trapezoidal rule, which is the
rule of the average-acceleration (Newmark 1/4, 1/2) integrator, so that for it the balance closes to roundoff:

    E_in = sum 1/2 (p_n + p_{n+1}) . (x_{n+1} - x_n),  p = -M r a_g
    E_k = 1/2 v^T M v,   E_d = sum 1/2 (C v_n + C v_{n+1}) . (x_{n+1} - x_n),
    W_r = sum 1/2 (r_n + r_{n+1}) . (x_{n+1} - x_n)   (restoring work)

    E_in = E_k + E_d + E_s,el + E_h + E_err          (E_err: the integrator's and the transfer systems', below)

W_r splits into the recoverable strain energy E_s,el, a function of the present restoring force alone, and the
hysteretic (dissipated plastic) energy E_h (Uang & Bertero 1990, "Evaluation of seismic energy in structures",
EESD 19(1):77-90, relative-energy form: the absorbed E_a = E_s + E_h). A yielding spring unloads along its
initial stiffness k0, so its recoverable energy at force f is f^2 / (2 k0); a group of modules sharing DOFs, with
initial stiffness K0 over those DOFs, 1/2 r^T K0^+ r (K0^+ the pseudo-inverse: a floating group's r is
self-equilibrated, in the range of K0). A linear structure has E_s,el = 1/2 x^T K x and E_h = 0.

W_r is the work of the measured forces on the structure's displacement, so it holds, with a minus sign, what the
watched sites' transfer systems added, T = sum of their E_err (above): the specimens' own work is W_r + T
(Mosqueda et al. 2007, Part I), and

    E_h = W_r + T - E_s,el,    E_in + T = E_k + E_d + E_s,el + E_h + E_int,    E_int = E_in - (E_k + E_d + W_r)

E_int what the integrator added; the issue's single error term E_in = E_k + E_d + E_s,el + E_h + E_err is
E_err = E_int - T. Under alpha-OS a linear specimen behind a lag keeps E_h = beta (w dt)^2 T, the share of the
scheme's correction K_I (x - x~) (x - x~ = beta dt^2 a = -beta (w dt)^2 x) in the interface's work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg  # noqa: F401 - sp.linalg.splu


def trapezoid_work(force_before: np.ndarray, force_after: np.ndarray, increment: np.ndarray) -> float:
    """The work [J] of a force varying linearly over a displacement increment [m]: 1/2 (f_n + f_n+1) . dx."""
    return 0.5 * float(np.dot(np.asarray(force_before) + np.asarray(force_after), increment))


@dataclass
class EnergyError:
    """One site's energy error (Mosqueda et al. 2007, Part I), accumulated step by step."""

    value: float = 0.0
    """E_err [J]: positive when the transfer system added energy"""
    _force: np.ndarray | None = None
    _error: np.ndarray | None = None

    def observe(self, command: np.ndarray, measured: np.ndarray, force: np.ndarray) -> float:
        """Add one step: commanded and measured displacement [m], measured force [N]; returns E_err [J]."""
        error = np.asarray(measured, float) - np.asarray(command, float)
        force = np.array(force, float)  # (a row of the run's window: kept past its slot's reuse)
        if self._force is not None:
            self.value += trapezoid_work(self._force, force, error - self._error)
        self._force, self._error = force, error
        return self.value

    def relative(self, input_energy: float) -> float:
        """E_err / E_in (1): the indicator compared with a threshold; 0 before any input energy."""
        return self.value / input_energy if input_energy > 0.0 else 0.0


@dataclass
class StrainEnergy:
    """The recoverable strain energy E_s,el [J] of the structure's modules at their initial stiffness K0 (N/m):
    1/2 r_g^T K0_g^+ r_g summed over the groups of modules sharing DOFs (a module sharing none is its own group,
    so that two yielding modules on separate DOFs are unloaded each along its own K0). A state, not an integral:
    a call costs one product with K0_g^+ a group (dense, O(n_g^2)) or one LU solve (sparse), factored once."""

    groups: list[tuple[np.ndarray, Any]]
    """each group's DOFs in the structure's and its K0 block"""
    _solvers: dict[int, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, stiffness: Any, modules: Sequence[np.ndarray]) -> StrainEnergy:
        """From K0 over the structure's DOFs (dense or CSR, as the pre-test measured it) and each module's DOFs."""
        groups: list[set[int]] = []
        for index in modules:
            dofs = {int(i) for i in index}
            for group in [g for g in groups if g & dofs]:
                groups.remove(group)
                dofs |= group
            groups.append(dofs)
        blocks = []
        for group in groups:
            index = np.array(sorted(group))
            blocks.append((index, stiffness[index][:, index] if sp.issparse(stiffness) else
                           np.asarray(stiffness, float)[np.ix_(index, index)]))
        return cls(blocks)

    def __call__(self, restoring: np.ndarray) -> float:
        """E_s,el [J] at the restoring force ``restoring`` over the structure's DOFs [N]."""
        total = 0.0
        for g, (index, block) in enumerate(self.groups):
            if g not in self._solvers:  # dense: K0^+; sparse: LU (which refuses a floating group)
                self._solvers[g] = (sp.linalg.splu(block.tocsc()).solve if sp.issparse(block)
                                    else scipy.linalg.pinvh(block).__matmul__)
            r = restoring[index]
            total += 0.5 * float(r @ self._solvers[g](r))
        return total


@dataclass
class EnergyBalance:
    """The whole structure's energy [J] by the trapezoidal rule: input, kinetic, damped and restoring work, the
    latter split into elastic and hysteretic.

    Two products a step (M v, C v; C v_n kept from the step before) and dot products: O(n^2) dense, O(nnz)
    sparse, no history."""

    mass: Any
    damping: Any
    strain: StrainEnergy
    input: float = 0.0
    kinetic: float = 0.0
    damped: float = 0.0
    restoring: float = 0.0
    transfer: float = 0.0
    """T [J]: what the watched sites' transfer systems added (the sum of their E_err), as the monitor last set it"""
    _last: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def observe(self, x: np.ndarray, v: np.ndarray, load: np.ndarray, restoring: np.ndarray) -> None:
        """Add one committed step: displacement [m], velocity [m/s], load p = -M r a_g [N], restoring force [N]."""
        x, damped = np.array(x, float), self.damping @ v
        if self._last is not None:
            x0, cv0, p0, r0 = self._last
            dx = x - x0
            self.input += 0.5 * float((p0 + load) @ dx)
            self.damped += 0.5 * float((cv0 + damped) @ dx)
            self.restoring += 0.5 * float((r0 + restoring) @ dx)
        self.kinetic = 0.5 * float(v @ (self.mass @ v))
        self._last = (x, damped, np.array(load, float), np.array(restoring, float))

    @property
    def elastic(self) -> float:
        """E_s,el [J]: the recoverable strain energy at the last step's restoring force."""
        return self.strain(self._last[3]) if self._last is not None else 0.0

    @property
    def hysteretic(self) -> float:
        """E_h = W_r + T - E_s,el [J]: the work the specimens dissipated (plastic)."""
        return self.restoring + self.transfer - self.elastic

    @property
    def residual(self) -> float:
        """E_int = E_in - (E_k + E_d + W_r) [J]: what the integrator added."""
        return self.input - (self.kinetic + self.damped + self.restoring)

    def terms(self) -> tuple[float, ...]:
        """Input, kinetic, damped, restoring, elastic, hysteretic and residual energy [J] (E_s,el computed once)."""
        elastic = self.elastic
        return (self.input, self.kinetic, self.damped, self.restoring, elastic,
                self.restoring + self.transfer - elastic, self.residual)
