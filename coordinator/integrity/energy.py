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

from hybridsim.modules.kernels import inlined, kernel


@inlined
def energy_error_step(state: np.ndarray, last: np.ndarray, command: np.ndarray, measured: np.ndarray,
                      force: np.ndarray) -> float:
    """Add one step to E_err (in place): ``state`` = (E_err [J], 1 once a step is observed), ``last`` = the last
    step's force [N] and error x_m - x_c [m] (2 x m); E_err += 1/2 (f_n + f_n+1) . (e_n+1 - e_n). Returns E_err."""
    work = 0.0
    for j in range(force.size):
        error = measured[j] - command[j]
        work += (last[0, j] + force[j]) * (error - last[1, j])
        last[0, j], last[1, j] = force[j], error
    if state[1] != 0.0:
        state[0] += 0.5 * work
    state[1] = 1.0
    return state[0]


class EnergyError:
    """One site's energy error (Mosqueda et al. 2007, Part I), accumulated step by step."""

    def __init__(self, value: float = 0.0, force: np.ndarray | None = None, error: np.ndarray | None = None) -> None:
        """From E_err [J] and the last step's force [N] and error x_m - x_c [m] (None: no step observed yet)."""
        self.state = np.array([value, float(force is not None)])
        self.last = None if force is None else np.array([force, error], float)

    def observe(self, command: np.ndarray, measured: np.ndarray, force: np.ndarray) -> float:
        """Add one step: commanded and measured displacement [m], measured force [N]; returns E_err [J]."""
        if self.last is None:
            self.last = np.zeros((2, len(force)))
        return energy_error_step(self.state, self.last, np.asarray(command, float), np.asarray(measured, float),
                                 np.asarray(force, float))

    @property
    def value(self) -> float:
        """E_err [J]: positive when the transfer system added energy."""
        return float(self.state[0])

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
    _solvers: dict[str, Any] = field(default_factory=dict)

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
        index, inverse = self.dense
        return half_quadratic(inverse, index, restoring) + self.sparse(restoring)

    @property
    def dense(self) -> tuple[np.ndarray, np.ndarray]:
        """The dense groups' DOFs and their K0^+ as one block diagonal (:func:`half_quadratic`'s)."""
        if not self._solvers:  # (and a sparse group's LU, which refuses a floating group), on first use
            self._solvers = self._factor()
        return self._solvers["dense"]

    def sparse(self, restoring: np.ndarray) -> float:
        """E_s,el [J] of the sparse groups alone (an LU solve each)."""
        total = 0.0
        for index, lu in self._solvers["sparse"] if self._solvers else self._factor()["sparse"]:
            r = restoring[index]
            total += 0.5 * float(r @ lu.solve(r))
        return total

    def _factor(self) -> dict[str, Any]:
        """The dense groups' DOFs and their K0^+ (block diagonal), the sparse groups' DOFs and LU."""
        dense = [(index, scipy.linalg.pinvh(block)) for index, block in self.groups if not sp.issparse(block)]
        index = np.concatenate([np.asarray(i, np.int64) for i, _ in dense]) if dense else np.zeros(0, np.int64)
        return {"dense": (index, scipy.linalg.block_diag(*[inverse for _, inverse in dense]) if dense else
                          np.zeros((0, 0))),
                "sparse": [(index, sp.linalg.splu(block.tocsc())) for index, block in self.groups if sp.issparse(block)]}


@inlined
def half_quadratic(matrix: np.ndarray, index: np.ndarray, r: np.ndarray) -> float:
    """1/2 r_I^T A r_I over the entries ``index`` of ``r`` (A dense, len(index) square)."""
    total = 0.0
    for i in range(index.size):
        row = 0.0
        for j in range(index.size):
            row += matrix[i, j] * r[index[j]]
        total += r[index[i]] * row
    return 0.5 * total


@inlined
def csr_row(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, i: int, v: np.ndarray) -> float:
    """Row i of a CSR matrix times ``v``."""
    total = 0.0
    for k in range(indptr[i], indptr[i + 1]):
        total += data[k] * v[indices[k]]
    return total


@inlined
def balance_step(sums: np.ndarray, last: np.ndarray, mass: tuple, damping: tuple, x: np.ndarray, v: np.ndarray,
                 load: np.ndarray, restoring: np.ndarray) -> None:
    """Add one committed step to ``sums`` = (E_in, E_k, E_d, W_r [J], 1 once a step is observed), in place, by
    the trapezoidal rule above; ``last``: the last step's x [m], C v, p and r [N] (4 x n, updated); ``mass``,
    ``damping``: (data, indices, indptr) of M and C in CSR."""
    started = sums[4] != 0.0
    work_in = work_damped = work_restoring = kinetic = 0.0
    for i in range(x.size):
        cv = csr_row(damping[0], damping[1], damping[2], i, v)
        kinetic += v[i] * csr_row(mass[0], mass[1], mass[2], i, v)
        dx = x[i] - last[0, i]
        work_in += (last[2, i] + load[i]) * dx
        work_damped += (last[1, i] + cv) * dx
        work_restoring += (last[3, i] + restoring[i]) * dx
        last[0, i], last[1, i], last[2, i], last[3, i] = x[i], cv, load[i], restoring[i]
    if started:
        sums[0] += 0.5 * work_in
        sums[2] += 0.5 * work_damped
        sums[3] += 0.5 * work_restoring
    sums[1] = 0.5 * kinetic
    sums[4] = 1.0


@kernel
def balance_row(sums: np.ndarray, last: np.ndarray, m_data: np.ndarray, m_indices: np.ndarray, m_indptr: np.ndarray,
                c_data: np.ndarray, c_indices: np.ndarray, c_indptr: np.ndarray, load_shape: np.ndarray,
                x: np.ndarray, v: np.ndarray, ground: np.ndarray, restoring: np.ndarray, i: int) -> None:
    """:func:`balance_step` from row i of a run's datasets of x [m], v [m/s], the ground acceleration [m/s^2] (a
    column per component) and r [N], the load p = -M r a_g (``load_shape`` = -M r, a column per component)."""
    load = np.zeros(load_shape.shape[0])
    for j in range(load.size):
        for c in range(load_shape.shape[1]):
            load[j] += load_shape[j, c] * ground[i, c]
    balance_step(sums, last, (m_data, m_indices, m_indptr), (c_data, c_indices, c_indptr), x[i], v[i], load,
                 restoring[i])


def _csr(matrix: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data, indices, indptr) of ``matrix`` (dense or sparse) in CSR, as :func:`balance_step` takes it."""
    csr = sp.csr_matrix(matrix, dtype=float)
    return csr.data, csr.indices.astype(np.int64), csr.indptr.astype(np.int64)


class EnergyBalance:
    """The whole structure's energy [J] by the trapezoidal rule: input, kinetic, damped and restoring work, the
    latter split into elastic and hysteretic.

    Two products a step (M v, C v; C v_n kept from the step before) and dot products: O(nnz), no history."""

    def __init__(self, mass: Any, damping: Any, strain: StrainEnergy) -> None:
        """``mass``, ``damping``: M and C (kg, N s/m; dense or sparse); ``strain``: the recoverable energy."""
        self.mass, self.damping, self.strain = _csr(mass), _csr(damping), strain
        self.sums = np.zeros(5)
        """E_in, E_k, E_d, W_r [J] and whether a step was observed (:func:`balance_step`)"""
        self.last = np.zeros((4, np.shape(mass)[0]))
        self.transfer = 0.0
        """T [J]: what the watched sites' transfer systems added (the sum of their E_err), as the monitor last set
        it"""

    def observe(self, x: np.ndarray, v: np.ndarray, load: np.ndarray, restoring: np.ndarray) -> None:
        """Add one committed step: displacement [m], velocity [m/s], load p = -M r a_g [N], restoring force [N]."""
        balance_step(self.sums, self.last, self.mass, self.damping, np.asarray(x, float), np.asarray(v, float),
                     np.asarray(load, float), np.asarray(restoring, float))

    def bind(self, rows: tuple[np.ndarray, ...], load_shape: np.ndarray) -> None:
        """Take a run's datasets of x, v, the ground acceleration (2-D: a column per component) and r (fixed for
        the run) and -M r (a column per component) for :meth:`observe_row`."""
        self._row = (self.sums, self.last, *self.mass, *self.damping, load_shape, *rows)

    def observe_row(self, i: int) -> None:
        """Add row i of the bound datasets (:func:`balance_row`)."""
        balance_row(*self._row, i)

    input = property(lambda self: float(self.sums[0]), lambda self, value: self.sums.__setitem__(0, value),
                     doc="E_in [J]")
    kinetic = property(lambda self: float(self.sums[1]), doc="E_k [J]")
    damped = property(lambda self: float(self.sums[2]), lambda self, value: self.sums.__setitem__(2, value),
                      doc="E_d [J]")
    restoring = property(lambda self: float(self.sums[3]), lambda self, value: self.sums.__setitem__(3, value),
                         doc="W_r [J]")

    @property
    def elastic(self) -> float:
        """E_s,el [J]: the recoverable strain energy at the last step's restoring force."""
        return self.strain(self.last[3]) if self.sums[4] else 0.0

    @property
    def hysteretic(self) -> float:
        """E_h = W_r + T - E_s,el [J]: the work the specimens dissipated (plastic)."""
        return self.terms()[5]

    @property
    def residual(self) -> float:
        """E_int = E_in - (E_k + E_d + W_r) [J]: what the integrator added."""
        return self.terms()[6]

    def terms(self) -> tuple[float, ...]:
        """Input, kinetic, damped, restoring, elastic, hysteretic and residual energy [J] (E_s,el computed once)."""
        out = np.empty((1, 7))
        self.write(out, 0)
        return tuple(out[0].tolist())

    def write(self, out: np.ndarray, i: int) -> None:
        """:meth:`terms` into row i of ``out`` (n x 7)."""
        r = self.last[3]
        balance_terms(self.sums, self.transfer, *self.strain.dense, r, self.strain.sparse(r), out, i)


@kernel
def balance_terms(sums: np.ndarray, transfer: float, index: np.ndarray, inverse: np.ndarray, restoring: np.ndarray,
                  sparse: float, out: np.ndarray, i: int) -> None:
    """Row i of ``out``: E_in, E_k, E_d, W_r (``sums``), E_s,el (``inverse``, ``index``: :func:`half_quadratic` at
    the last ``restoring``, plus ``sparse``, the sparse groups'; 0 before a step), E_h = W_r + T - E_s,el and
    E_int = E_in - (E_k + E_d + W_r) [J]."""
    elastic = half_quadratic(inverse, index, restoring) + sparse if sums[4] != 0.0 else 0.0
    out[i, 0], out[i, 1], out[i, 2], out[i, 3], out[i, 4] = sums[0], sums[1], sums[2], sums[3], elastic
    out[i, 5] = sums[3] + transfer - elastic
    out[i, 6] = sums[0] - (sums[1] + sums[2] + sums[3])
