"""Physical specimens of a virtual lab: a force f (N) for a deformation y (m), path dependent.

A lab specimen sees every control sample and commits its state there
(:meth:`Specimen.update`); a monolithic reference solver tries deformations
(:meth:`Specimen.trial`) and commits once per integration step.

Bilinear with kinematic hardening (initial stiffness k0, yield displacement
u_y, post-yield ratio b, f_y = k0 u_y): elastic predictor from the last
committed state, f_tr = f_c + k0 (y - y_c), clipped to the bounding lines

    b k0 y - (1 - b) f_y  <=  f  <=  b k0 y + (1 - b) f_y

with tangent k0 inside the bounds and b k0 on them.  This is OpenSees'
``Steel01`` without isotropic hardening.  The first committed state is
(0, 0).
"""

from __future__ import annotations

from typing import Protocol


class Specimen(Protocol):
    """A uniaxial specimen with a committed state and one pending trial."""

    initial_stiffness: float
    """N/m"""

    def trial(self, deformation: float) -> tuple[float, float]:
        """Force (N) and tangent (N/m) at ``deformation`` (m) from the committed state; nothing is committed."""
        ...

    def commit(self) -> None:
        """Make the last trial the committed state."""
        ...

    def update(self, deformation: float) -> float:
        """Trial at ``deformation`` and commit it; return the force (N)."""
        ...


class LinearSpecimen:
    """f = K y."""

    def __init__(self, stiffness: float) -> None:
        if not stiffness > 0:
            raise ValueError(f"specimen stiffness must be positive (N/m), got {stiffness}")
        self.initial_stiffness = float(stiffness)

    def trial(self, deformation: float) -> tuple[float, float]:
        return self.initial_stiffness * deformation, self.initial_stiffness

    def commit(self) -> None:
        """A linear spring has no state."""

    def update(self, deformation: float) -> float:
        return self.initial_stiffness * deformation


class HystereticSpecimen:
    """A path-dependent specimen: ``committed`` and the last trial ``_trial`` are (deformation, state) pairs;
    subclasses give :meth:`trial`, which sets ``_trial``."""

    committed: tuple[float, float]
    _trial: tuple[float, float]

    def trial(self, deformation: float) -> tuple[float, float]:
        raise NotImplementedError

    def commit(self) -> None:
        self.committed = self._trial

    def update(self, deformation: float) -> float:
        force = self.trial(deformation)[0]
        self.commit()
        return force


class BilinearSpecimen(HystereticSpecimen):
    """Bilinear spring with kinematic hardening (see the module docstring)."""

    def __init__(self, stiffness: float, yield_displacement: float, hardening_ratio: float) -> None:
        if not stiffness > 0:
            raise ValueError(f"specimen stiffness k0 must be positive (N/m), got {stiffness}")
        if not yield_displacement > 0:
            raise ValueError(f"yield displacement must be positive (m), got {yield_displacement}")
        if not 0.0 <= hardening_ratio < 1.0:
            raise ValueError(f"post-yield stiffness ratio b must be in [0, 1), got {hardening_ratio}")
        self.initial_stiffness = float(stiffness)
        self.yield_displacement = float(yield_displacement)
        self.hardening_ratio = float(hardening_ratio)
        self._hardening = self.hardening_ratio * self.initial_stiffness
        self._bound_offset = (1.0 - self.hardening_ratio) * self.initial_stiffness * self.yield_displacement
        self.committed = (0.0, 0.0)
        """(deformation m, force N) of the committed state"""
        self._trial = self.committed

    @property
    def yield_force(self) -> float:
        """f_y = k0 u_y (N)."""
        return self.initial_stiffness * self.yield_displacement

    def trial(self, deformation: float) -> tuple[float, float]:
        y_c, f_c = self.committed
        force = f_c + self.initial_stiffness * (deformation - y_c)
        tangent = self.initial_stiffness
        upper = self._hardening * deformation + self._bound_offset
        lower = self._hardening * deformation - self._bound_offset
        if force >= upper:
            force, tangent = upper, self._hardening
        elif force <= lower:
            force, tangent = lower, self._hardening
        self._trial = (float(deformation), force)
        return force, tangent

