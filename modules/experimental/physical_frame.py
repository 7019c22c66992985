"""The physical-frame model that turns measured interface motion into feedback forces (maRTHS §10).

A one-bay portal with pinned bases and 5 DOFs in frame sign (counter-clockwise
positive): q = [X, theta1 (controlled, node 1), theta2 (uncontrolled, node 2),
theta3 (base under node 2), theta4 (base under node 1)].  Axial deformation is
neglected.  The unmeasured rotations follow statically from (X, theta1):
[theta2, theta3, theta4] = T [X, theta1] with T = -Koo^-1 Kot.  Each control
sample the force is F5 = K5 q + C5 dq/dt + M5 d2q/dt2, with the derivatives
taken as the two cascaded backward differences of the benchmark's Derivative
blocks (0 at the first sample).  Units: m, rad, N, N*m, kg, kg*m^2, s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Key, Number, Schema
from hybridsim.modules.kernels import dot, kernel
from hybridsim.wire.contract import Dof, ModuleError


CONFIG = Schema("frame", "The portal frame model that makes the feedback force from the measured motion.", {
    **{name: Key(Number(unit, 0, open_minimum=True), doc, required=True) for name, unit, doc in (
        ("beam_length", "m", "beam length"), ("column_length", "m", "column length"),
        ("column_inertia", "m^4", "second moment of area of a column, tuning factor included"),
        ("beam_inertia", "m^4", "second moment of area of the beam"),
        ("column_area", "m^2", "column cross-section"), ("beam_area", "m^2", "beam cross-section"),
        ("elastic_modulus", "Pa", "Young's modulus"), ("density", "kg/m^3", "density"))},
    "mass_factor": Key(Number("", 0, open_minimum=True), "factor on the lumped masses", default=1.1),
    "damping_ratio": Key(Number("", 0, 1, open_maximum=True), "modal damping ratio in every mode", default=0.05),
    "frequency_rounding": Key(Number("rad/s", 0, open_minimum=True), "modal frequencies are rounded to this step",
                              default=0.01),
})


@dataclass(frozen=True)
class PortalFrame:
    """Geometry and material of the portal (m, m^4, m^2, Pa, kg/m^3)."""

    beam_length: float
    column_length: float
    column_inertia: float
    """second moment of area of a column, tuning factor included (m^4)"""
    beam_inertia: float
    column_area: float
    beam_area: float
    elastic_modulus: float
    density: float
    mass_factor: float = 1.1
    """factor on the lumped masses"""
    damping_ratio: float = 0.05
    """modal damping ratio in every mode"""
    frequency_rounding: float = 0.01
    """modal frequencies are rounded to this step (rad/s) before the damping is built"""

    def stiffness(self) -> np.ndarray:
        """K5 (5x5; N/m, N, N*m/rad), all couplings positive in frame sign."""
        ei_c, ei_b, lc, lb = (self.elastic_modulus * self.column_inertia, self.elastic_modulus * self.beam_inertia,
                              self.column_length, self.beam_length)
        c12, c6, c4, c2 = 12 * ei_c / lc**3, 6 * ei_c / lc**2, 4 * ei_c / lc, 2 * ei_c / lc
        b4, b2 = 4 * ei_b / lb, 2 * ei_b / lb
        return np.array([
            [2 * c12, c6, c6, c6, c6],
            [c6, c4 + b4, b2, 0.0, c2],
            [c6, b2, c4 + b4, c2, 0.0],
            [c6, 0.0, c2, c4, 0.0],
            [c6, c2, 0.0, 0.0, c4],
        ])

    def mass(self) -> np.ndarray:
        """M5 = diag(mX, m_theta, m_theta, m_base, m_base) (kg, kg*m^2), lumped with ``mass_factor``."""
        mb = self.density * self.beam_area * self.beam_length
        mc = self.density * self.column_area * self.column_length
        lb, lc, f = self.beam_length, self.column_length, self.mass_factor
        m_x = f * (mb + 2 * mc) / 2
        m_theta = f * (mb * lb**2 / 2 + mc * lc**2 / 2) / 3
        m_base = f * (mc * lc**2 / 2) / 3
        return np.diag([m_x, m_theta, m_theta, m_base, m_base])

    def modal_frequencies(self) -> np.ndarray:
        """Natural circular frequencies of (K5, M5), rounded to ``frequency_rounding`` (rad/s), ascending."""
        eigenvalues = _eigh(self.stiffness(), self.mass(), eigvals_only=True)
        return np.round(np.sqrt(eigenvalues) / self.frequency_rounding) * self.frequency_rounding

    def damping(self) -> np.ndarray:
        """C5 = sum_i 2 zeta w_i (M phi_i)(M phi_i)^T / (phi_i^T M phi_i), w_i rounded first (N*s/m ...)."""
        k, m = self.stiffness(), self.mass()
        _, modes = _eigh(k, m)
        damping = np.zeros_like(k)
        for omega, phi in zip(self.modal_frequencies(), modes.T):
            m_phi = m @ phi
            damping += 2 * self.damping_ratio * omega * np.outer(m_phi, m_phi) / (phi @ m_phi)
        return damping

    def condensation(self) -> np.ndarray:
        """T (3x2): [theta2, theta3, theta4] = T [X, theta1], from K5 (static, no load on DOFs 3..5)."""
        k = self.stiffness()
        return -np.linalg.solve(k[2:, 2:], k[2:, :2])

    def shape(self) -> np.ndarray:
        """Psi (5x2): q = Psi [X, theta1], the identity on the measured DOFs stacked on T."""
        return np.vstack([np.eye(2), self.condensation()])

    def condensed_stiffness(self) -> np.ndarray:
        """K2 = Psi^T K5 Psi (2x2, frame sign): the static stiffness seen at (X, theta1)."""
        psi = self.shape()
        return psi.T @ self.stiffness() @ psi


@kernel
def feedback_sample(psi: np.ndarray, k: np.ndarray, c: np.ndarray, m: np.ndarray, q: np.ndarray,
                    velocity: np.ndarray, h: float, started: bool, x: float, theta: float) -> np.ndarray:
    """F5[0:3] = K q + C q' + M q'' of this sample; ``q``, ``velocity`` (the last sample's, or unused when not
    ``started``) become this sample's, in place."""
    dofs = q.size
    acceleration = np.zeros(dofs)
    for i in range(dofs):
        q_i = psi[i, 0] * x + psi[i, 1] * theta
        if started:
            v_i = (q_i - q[i]) / h
            acceleration[i] = (v_i - velocity[i]) / h
        else:
            v_i = 0.0
        q[i], velocity[i] = q_i, v_i
    force = np.empty(k.shape[0])
    for r in range(k.shape[0]):
        force[r] = dot(k[r], q) + dot(c[r], velocity) + dot(m[r], acceleration)
    return force


class FeedbackForce:
    """F5[0:3] = (K5 q + C5 q' + M5 q'')[0:3] from measured (X, theta1), one control sample per call.

    The per-sample arithmetic is one compiled kernel (numba); sums run in index order.
    """

    def __init__(self, frame: PortalFrame, sample_period: float) -> None:
        self.frame = frame
        self.sample_period = float(sample_period)
        self._psi = frame.shape()
        self._k, self._c, self._m = (np.ascontiguousarray(matrix[:3]) for matrix in
                                     (frame.stiffness(), frame.damping(), frame.mass()))
        self.reset()

    def reset(self) -> None:
        """Back to the first sample: no previous position, zero derivatives."""
        self._started = False
        self._q = np.zeros(5)
        self._velocity = np.zeros(5)

    def force(self, x: float, theta: float) -> tuple[np.ndarray, np.ndarray]:
        """(F5[0:3] in N, N*m, N*m; q in m, rad) for the measured X (m) and theta1 (rad) of this sample."""
        force = feedback_sample(*self.kernel_arrays(), self.sample_period, self._started, float(x), float(theta))
        self.ran(1)
        return force, self._q.copy()

    def kernel_arrays(self) -> tuple[np.ndarray, ...]:
        """Psi, K, C, M (rows 0..2), q and q' as :func:`feedback_sample` takes them (q, q' updated in place)."""
        return self._psi, self._k, self._c, self._m, self._q, self._velocity

    @property
    def started(self) -> bool:
        """Whether a sample was taken (the derivatives have a previous position)."""
        return self._started

    def ran(self, samples: int) -> None:
        """``samples`` were taken on :meth:`kernel_arrays`."""
        self._started = self._started or samples > 0

    def static_force(self, x: float, theta: float) -> tuple[np.ndarray, np.ndarray]:
        """(F5[0:3], q) of a quasi-static deformation (no rates): the pre-test's view of the frame."""
        q = self._psi @ np.array([x, theta])
        return self._k @ q, q

    def state(self) -> dict[str, list[float] | None]:
        return {"q": self._q.tolist() if self._started else None, "velocity": self._velocity.tolist()}

    def set_state(self, state: dict[str, list[float] | None]) -> None:
        self._started = state["q"] is not None
        self._q = np.zeros(5) if state["q"] is None else np.array(state["q"], float)
        self._velocity = np.array(state["velocity"], float)


def _eigh(k: np.ndarray, m: np.ndarray, **options: bool) -> np.ndarray:
    """scipy.linalg.eigh of the pencil (k, m), imported here: 0.3 s that describing a site's configuration does
    not need."""
    import scipy.linalg

    return scipy.linalg.eigh(k, m, **options)


FRAME_DOFS = (("x", "translation"), ("theta", "rotation"), ("theta_free", "rotation"))
"""the interface DOFs of a site with the frame model, by default: x, theta1 and the free theta2"""


def frame_dofs(config: Mapping[str, Any]) -> tuple[Dof, ...]:
    """The three interface DOFs (x, theta1, theta2) of a site config with a ``frame``, named by its ``dofs`` and
    ``kinds``."""
    names = list(config.get("dofs", [name for name, _ in FRAME_DOFS]))
    kinds = list(config.get("kinds", [kind for _, kind in FRAME_DOFS]))
    if len(names) != 3 or len(kinds) != 3:
        raise ModuleError("experimental module: dofs and kinds name the three interface DOFs (x, theta1, theta2)")
    return tuple(Dof(n, k) for n, k in zip(names, kinds))


class FrameFeedback:
    """The maRTHS benchmark's force source: interface (x, theta1, theta2), setup (x, theta1); the frame model's
    F5[0:3] from the measured motion, theta2 its free rotation (the load cells are not used)."""

    def setup_target(self, target: np.ndarray) -> np.ndarray:
        """The setup's (x, theta1) of the interface's (x, theta1, theta2)."""
        return target[:2]

    def settling(self) -> bool:
        return False

    def __init__(self, feedback: FeedbackForce, setup: Any) -> None:
        self.feedback = feedback
        self.setup = setup

    @classmethod
    def of(cls, config: Mapping[str, Any], setup: Any, sample_period: float) -> FrameFeedback:
        """The force source of a site config's ``frame`` table, over a setup of (x, theta)."""
        if len(setup.dofs) != 2:
            raise ModuleError("experimental module: the frame model's feedback force needs a setup of (x, theta)")
        return cls(FeedbackForce(PortalFrame(**config["frame"]), sample_period), setup)

    def respond(self, strokes: np.ndarray, loads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x, theta = self.setup.pose(strokes)
        force, q = self.feedback.force(x, theta)
        return np.array([x, theta, q[2]]), force

    def probe(self, command: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        force, q = self.feedback.static_force(command[0], command[1])
        return np.array([command[0], command[1], q[2]]), force

    def state(self) -> Any:
        return self.feedback.state()

    def set_state(self, state: Any) -> None:
        self.feedback.set_state(state)
