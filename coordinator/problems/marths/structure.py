"""The structural side of the maRTHS benchmark: reference frame, partitions, Newmark map (§4-§6).

DOF indices are 0-based here (the benchmark's SAP2000 equation number minus 1).
Rotations are in SAP sign inside the 29-DOF models; the interface target and
the feedback model use frame sign (theta_frame = -theta_SAP).  Units: N, m,
kg, s, rad.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from hybridsim.coordinator.model import rayleigh_coefficients
from hybridsim.coordinator.problems.marths import data
from hybridsim.modules.experimental.physical_frame import PortalFrame
from hybridsim.modules.kernels import kernel

X_FLOOR1, THETA_CONTROLLED, THETA_FREE = 26, 20, 28
"""0-based DOFs of the interface: lateral x (27), controlled joint-7 rotation (21), free joint-6 rotation (29)"""
FEEDBACK_DOFS = (X_FLOOR1, THETA_CONTROLLED, THETA_FREE)
"""where the feedback forces (F27, M21, M29) act"""
IDEAL_PART_DOFS = (X_FLOOR1, THETA_FREE, THETA_CONTROLLED)
"""p = (27, 29, 21): the DOF order of the ideal physical part (§5.1)"""
STORY_DOFS = {"x_2nd": 25, "theta_2nd": 21, "x_3rd": 12, "theta_3rd": 2}
"""storey outputs (m; rad, SAP sign)"""
FRAME_SIGN = np.array([1.0, -1.0, -1.0])
"""(x, theta_21, theta_29): SAP sign <-> frame sign, the same factor for forces and motions"""
PARTITIONS = ("as-published", "consistent")


@kernel
def newmark_step(transition: np.ndarray, ground: np.ndarray, feedback: np.ndarray, state: np.ndarray, ag: float,
                 force: np.ndarray) -> np.ndarray:
    """s_k = transition s_{k-1} + ground ag_k + feedback f_k (:class:`NewmarkMap`), compiled.

    The two products are BLAS matrix-vector products (numba's ``np.dot``), bit for bit numpy's ``dot``:
    the RLS-AC loop amplifies the round-off of another summation order to 1e-8 in its histories.
    """
    return np.dot(transition, state) + ground * ag + np.dot(feedback, force)


@kernel
def free_response(transition: np.ndarray, ground: np.ndarray, dofs: int, ground_acceleration: np.ndarray) -> np.ndarray:
    """U_k (N x ``dofs``) of s_k = transition s_{k-1} + ground ag_k from rest (BLAS products, as numpy's ``@``)."""
    state = np.zeros(transition.shape[0])
    out = np.empty((ground_acceleration.size, dofs))
    for k in range(ground_acceleration.size):
        state = np.dot(transition, state) + ground * ground_acceleration[k]
        out[k] = state[:dofs]
    return out


@dataclass(frozen=True)
class FrameModel:
    """A linear model over the 29 DOFs: M u'' + C u' + K u = -load_mass * ag - F."""

    name: str
    stiffness: np.ndarray
    damping: np.ndarray
    mass: np.ndarray
    load_mass: np.ndarray
    """the vector m_l in the ground load -m_l ag (kg); M l for a consistent load"""


def reference_model() -> FrameModel:
    """The 29-DOF reference frame with Rayleigh damping 5 % at the benchmark's anchors (§4)."""
    stiffness, mass = data.reference_matrices()
    rayleigh = data.constants()["reference_structure"]["rayleigh"]
    a, b = rayleigh_coefficients(rayleigh["wi_rad_s"], rayleigh["wj_rad_s"], rayleigh["zeta"])
    return FrameModel("reference", stiffness.copy(), a * mass + b * stiffness, mass.copy(), mass @ influence())


def influence() -> np.ndarray:
    """l: 1 at the lateral floor DOFs (13, 26, 27), 0 elsewhere (§4)."""
    vector = np.zeros(data.reference_matrices()[0].shape[0])
    vector[list(data.lateral_dofs())] = 1.0
    return vector


def ideal_physical_part() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(KP, CP, MP) over p = (27, 29, 21): the portal the benchmark subtracts (§5.1), rho as written."""
    c = data.constants()["ideal_physical_substructure"]
    inch = c["inch_m"]
    lb, lc, e = c["Lb_m"], c["Lc_m"], c["E_Pa"]
    ic, ib = c["Ic_in4"] * inch**4, c["Ib_in4"] * inch**4
    ac, ab = c["Ac_in2"] * inch**2, c["Ab_in2"] * inch**2
    mb, mc = c["rho_kg_m3"] * ab * lb, c["rho_kg_m3"] * ac * lc
    m1 = mb + mc
    m2 = (mb / 2) * lb**2 / 12 + (mc / 2) * lc**2 / 12
    mass = np.diag([m1, m2, m2])
    k11, k12 = 6 * e * ic / lc**3, -3 * e * ic / lc**2
    k22, k23 = 3 * e * ic / lc + 4 * e * ib / lb, -2 * e * ib / lb
    stiffness = np.array([[k11, k12, k12], [k12, k22, k23], [k12, k23, k22]])
    omega = np.sqrt(scipy.linalg.eigh(stiffness, mass, eigvals_only=True))
    alpha, beta = rayleigh_coefficients(omega[0], omega[2], c["rayleigh_zeta"])
    return stiffness, alpha * mass + beta * stiffness, mass


def feedback_frame() -> PortalFrame:
    """The 5-DOF physical-frame model that computes the feedback force (§10.1)."""
    c = data.constants()["physical_frame_feedback_model"]
    return PortalFrame(
        beam_length=c["Lb_m"], column_length=c["Lc_m"],
        column_inertia=c["Ic_m4_untuned"] * c["tuning_column"], beam_inertia=c["Ib_m4"] * c["tuning_beam"],
        column_area=c["Ac_m2"], beam_area=c["Ab_m2"], elastic_modulus=c["E_Pa"], density=c["rho_kg_m3"],
        mass_factor=c["mass_factor_5dof"], damping_ratio=c["zeta_modal"],
        frequency_rounding=c["modal_frequency_rounding_rad_s"])


def feedback_matrices(frame: PortalFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(K, C, M) of the feedback-force model as 29x29 matrices in SAP sign.

    The model maps (U27, U21) to (F27, M21, M29) through q = Psi [U27, -U21]
    (§10.2): rows at the three feedback DOFs, columns at DOFs 27 and 21 only
    (the numerical U29 never enters).  Damping and mass are not symmetric.
    """
    psi = frame.shape()
    rows, cols = list(FEEDBACK_DOFS), [X_FLOOR1, THETA_CONTROLLED]
    n = data.reference_matrices()[0].shape[0]
    out = []
    for matrix in (frame.stiffness(), frame.damping(), frame.mass()):
        block = FRAME_SIGN[:, None] * (matrix @ psi)[:3] * FRAME_SIGN[None, :2]
        full = np.zeros((n, n))
        full[np.ix_(rows, cols)] = block
        out.append(full)
    return out[0], out[1], out[2]


def numerical_substructure() -> FrameModel:
    """The numerical substructure as published (§5.2): the reference minus the ideal part.

    KP and CP come off the 3x3 block of DOFs (27, 29, 21), M1 off DOF 27
    only; the ground load acts on MN l.
    """
    reference = reference_model()
    kp, cp, mp = ideal_physical_part()
    block = np.ix_(IDEAL_PART_DOFS, IDEAL_PART_DOFS)
    stiffness, damping, mass = reference.stiffness.copy(), reference.damping.copy(), reference.mass.copy()
    stiffness[block] -= kp
    damping[block] -= cp
    mass[X_FLOOR1, X_FLOOR1] -= mp[0, 0]
    return FrameModel("numerical (as published)", stiffness, damping, mass, mass @ influence())


def numerical_map(partition: str, dt: float) -> "NewmarkMap":
    """The Newmark map of the numerical substructure of a partition.

    ``as-published``: :func:`numerical_substructure`.  ``consistent``: the
    reference structure minus exactly the feedback-force model, i.e. minus
    the force that model computes (K5, C5, M5 through Psi, with the same
    backward differences) from the substructure's own interface motion,
    taken implicitly in the Newmark step.  With a perfect actuator the
    feedback then cancels it, and numerical = reference up to the x-hat
    kinematics error.  (Subtracting the model's matrices instead leaves a
    negative rotational mass of -0.89 kg m^2 at DOF 21, and the explicit
    coupling diverges within seconds.)
    """
    if partition == "as-published":
        return NewmarkMap.of(numerical_substructure(), dt)
    if partition == "consistent":
        return NewmarkMap.of(reference_model(), dt, subtracted=feedback_matrices(feedback_frame()))
    raise ValueError(f"unknown partition {partition!r}; use one of {', '.join(PARTITIONS)}")


@dataclass(frozen=True)
class NewmarkMap:
    """One Newmark step per tick as a linear map of the state s = [U; V; A (; U_{k-2} at model columns)] (§6).

    s_k = transition s_{k-1} + ground ag_k + feedback f_k, where the load of
    tick k (ground acceleration ag_k in m/s^2, feedback f_k = (F27, M21, M29)
    in N, N*m, SAP sign) acts at the end of the step, and U_k is what the
    benchmark logs at t_k.  Kbar = K + a0 M + a1 C is inverted once.

    ``subtracted`` = (Kf, Cf, Mf): a force model Kf u + Cf Du + Mf D2u, with
    D, D2 the backward first and second differences, added to the step's
    load and solved with it (it depends on U_k), which needs U_{k-2} at the
    model's columns in the state.  From rest with ag_0 = 0 the differences
    start like the benchmark's Derivative blocks (0 at the first sample).
    """

    transition: np.ndarray
    ground: np.ndarray
    feedback: np.ndarray
    dofs: int

    @classmethod
    def of(cls, model: FrameModel, dt: float, gamma: float = 0.5, beta: float = 0.25,
           subtracted: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> "NewmarkMap":
        a0, a1, a2 = 1 / (beta * dt**2), gamma / (beta * dt), 1 / (beta * dt)
        a3, a4, a5 = 1 / (2 * beta) - 1, gamma / beta - 1, dt / 2 * (gamma / beta - 2)
        a6, a7 = dt * (1 - gamma), gamma * dt
        m, c, k = model.mass, model.damping, model.stiffness
        n = k.shape[0]
        zero = np.zeros((n, n))
        kbar = k + a0 * m + a1 * c
        on_u = a0 * m + a1 * c
        extra = np.zeros((n, 0))
        columns: list[int] = []
        if subtracted is not None:
            kf, cf, mf = subtracted
            columns = [int(j) for j in np.flatnonzero(np.any(kf != 0, axis=0) | np.any(cf != 0, axis=0)
                                                      | np.any(mf != 0, axis=0))]
            kbar = kbar - (kf + cf / dt + mf / dt**2)
            on_u = on_u - cf / dt - 2 * mf / dt**2
            extra = (mf / dt**2)[:, columns]
        kbar_inv = np.linalg.inv(kbar)
        eye = np.eye(n)
        u_row = kbar_inv @ np.hstack([on_u, a2 * m + a4 * c, a3 * m + a5 * c, extra])
        shift = np.hstack([eye, zero, zero, np.zeros((n, len(columns)))])
        a_row = a0 * (u_row - shift) - np.hstack([zero, a2 * eye, a3 * eye, np.zeros((n, len(columns)))])
        v_row = np.hstack([zero, eye, a6 * eye, np.zeros((n, len(columns)))]) + a7 * a_row
        transition = np.vstack([u_row, v_row, a_row, shift[columns]])
        u_load = -kbar_inv
        load = np.vstack([u_load, a7 * a0 * u_load, a0 * u_load, np.zeros((len(columns), n))])
        return cls(transition, load @ model.load_mass, load[:, list(FEEDBACK_DOFS)], n)

    @property
    def size(self) -> int:
        return self.transition.shape[0]

    def advance(self, state: np.ndarray, ag: float, force: np.ndarray) -> np.ndarray:
        """s_k from s_{k-1}, ag_k (m/s^2) and f_k (N, N*m): :func:`newmark_step`."""
        return newmark_step(self.transition, self.ground, self.feedback, state, float(ag),
                            np.asarray(force, dtype=float))

    def displacements(self, ground_acceleration: np.ndarray) -> np.ndarray:
        """U_k (N x dofs, m and rad SAP sign) for F = 0, starting at rest: the reference run (:func:`free_response`)."""
        return free_response(self.transition, self.ground, self.dofs, np.asarray(ground_acceleration, float))
