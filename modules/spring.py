"""The `spring` module: one uniaxial spring to the ground or between two DOFs, linear or nonlinear.

A small numerical substructure for nonlinear hybrid tests without OpenSees.
Deformation y = d_1 (one DOF: a spring to the ground) or y = d_2 - d_1 (two
DOFs); the restoring force is f(y) on the spring's DOFs, [f] or [-f, +f].
Laws: ``linear`` (stiffness), ``bilinear`` (stiffness, yield_displacement,
hardening_ratio: kinematic hardening, OpenSees Steel01 without isotropic
hardening), ``stiffening`` (f = k y (1 + (y / y_ref)^2), a hardening
elastic spring whose tangent grows past the initial stiffness) and
``bouc-wen`` (stiffness, post_yield_ratio alpha, exponent n, gamma and beta in 1/m^n, amplitude A:
f = alpha k y + (1 - alpha) k z, dz = (A - |z|^n (gamma + beta sign(dy z))) dy, integrated
by backward Euler from the committed state as OpenSees' BoucWen material without degradation).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.modules.base import StepLedger
from hybridsim.modules.config_schema import Key, Names, Number, Schema, Variants
from hybridsim.wire.contract import Command, Description, Dof, ModuleError
from hybridsim.modules.plant.specimens import BilinearSpecimen, HystereticSpecimen, LinearSpecimen, Specimen


class StiffeningSpecimen:
    """Elastic f = k y (1 + (y / y_ref)^2): tangent k (1 + 3 (y / y_ref)^2) >= k (N/m)."""

    def __init__(self, stiffness: float, reference_displacement: float) -> None:
        if not (stiffness > 0 and reference_displacement > 0):
            raise ValueError("stiffening spring needs positive stiffness (N/m) and reference_displacement (m)")
        self.initial_stiffness = float(stiffness)
        self.reference_displacement = float(reference_displacement)

    def trial(self, deformation: float) -> tuple[float, float]:
        ratio = deformation / self.reference_displacement
        k = self.initial_stiffness
        return k * deformation * (1.0 + ratio * ratio), k * (1.0 + 3.0 * ratio * ratio)

    def commit(self) -> None:
        """Elastic: no state."""

    def update(self, deformation: float) -> float:
        return self.trial(deformation)[0]


class BoucWenSpecimen(HystereticSpecimen):
    """Bouc-Wen hysteresis (see the module docstring); z in m, its step solved by Newton to round-off."""

    def __init__(self, stiffness: float, post_yield_ratio: float, exponent: float, gamma: float, beta: float,
                 amplitude: float = 1.0) -> None:
        if not (stiffness > 0 and 0.0 <= post_yield_ratio < 1.0 and exponent >= 1.0 and amplitude > 0
                and beta + gamma > 0):
            raise ValueError("bouc-wen spring needs stiffness > 0 (N/m), 0 <= post_yield_ratio < 1, exponent >= 1, "
                             "amplitude > 0 and beta + gamma > 0")
        self.initial_stiffness = float(stiffness)
        self.alpha, self.n, self.gamma, self.beta, self.amplitude = (float(post_yield_ratio), float(exponent),
                                                                     float(gamma), float(beta), float(amplitude))
        self.committed = (0.0, 0.0)
        """(deformation m, hysteretic displacement z m) of the committed state"""
        self._trial = self.committed

    def trial(self, deformation: float) -> tuple[float, float]:
        y_c, z_c = self.committed
        step = deformation - y_c
        z, slope = z_c, self.amplitude
        for _ in range(50):
            psi = self.gamma + self.beta * math.copysign(1.0, step * z) if step * z != 0.0 else self.gamma + self.beta
            power = abs(z) ** self.n
            slope = self.amplitude - power * psi
            residual = z - z_c - step * slope
            derivative = 1.0 + step * self.n * abs(z) ** (self.n - 1.0) * math.copysign(1.0, z) * psi
            correction = residual / derivative
            z -= correction
            if abs(correction) <= 1e-15 * max(abs(z), 1e-12):
                break
        k, a = self.initial_stiffness, self.alpha
        self._trial = (float(deformation), z)
        return a * k * deformation + (1.0 - a) * k * z, a * k + (1.0 - a) * k * slope


_STIFFNESS = {"stiffness": Key(Number("N/m", 0, open_minimum=True), "initial stiffness k", required=True)}
LAWS = {
    "linear": Schema("linear spring", "f = k y.", _STIFFNESS),
    "bilinear": Schema("bilinear spring", "Kinematic hardening (OpenSees Steel01 without isotropic hardening).", {
        **_STIFFNESS,
        "yield_displacement": Key(Number("m", 0, open_minimum=True), "deformation at first yield", required=True),
        "hardening_ratio": Key(Number("", 0, 1, open_maximum=True), "post-yield stiffness / k", default=0.0)}),
    "stiffening": Schema("stiffening spring", "Elastic f = k y (1 + (y / y_ref)^2).", {
        **_STIFFNESS,
        "reference_displacement": Key(Number("m", 0, open_minimum=True), "y_ref", required=True)}),
    "bouc-wen": Schema("Bouc-Wen spring", "f = alpha k y + (1 - alpha) k z, dz = (A - |z|^n (gamma + beta sign(dy z))) "
                       "dy (OpenSees' BoucWen without degradation).", {
        **_STIFFNESS,
        "post_yield_ratio": Key(Number("", 0, 1, open_maximum=True), "alpha", required=True),
        "exponent": Key(Number("", 1), "n", default=1.0),
        "gamma": Key(Number("1/m^n"), "gamma (beta + gamma > 0)", required=True),
        "beta": Key(Number("1/m^n"), "beta", required=True),
        "amplitude": Key(Number("", 0, open_minimum=True), "A", default=1.0)}),
}
CONFIG = Schema("spring", "One uniaxial spring to the ground (one DOF) or between two DOFs: y = d_2 - d_1.", {
    "dofs": Key(Names(), "one DOF (to the ground) or two (between them)", required=True),
}, variants=Variants("law", LAWS, default="linear", doc="the spring's force law"))


def build_specimen(config: Mapping[str, Any]) -> Specimen:
    law = config.get("law", "linear")
    try:
        if law == "linear":
            return LinearSpecimen(float(config["stiffness"]))
        if law == "bilinear":
            return BilinearSpecimen(float(config["stiffness"]), float(config["yield_displacement"]),
                                    float(config.get("hardening_ratio", 0.0)))
        if law == "stiffening":
            return StiffeningSpecimen(float(config["stiffness"]), float(config["reference_displacement"]))
        if law == "bouc-wen":
            return BoucWenSpecimen(float(config["stiffness"]), float(config["post_yield_ratio"]),
                                   float(config.get("exponent", 1.0)), float(config["gamma"]), float(config["beta"]),
                                   float(config.get("amplitude", 1.0)))
    except KeyError as exc:
        raise ModuleError(f"spring module: law {law!r} needs key {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise ModuleError(f"spring module: {exc}") from None
    raise ModuleError(f"spring module: unknown law {law!r}; choose linear, bilinear, stiffening or bouc-wen")


class SpringModule(StepLedger):
    kind = "spring"
    CONFIG = CONFIG

    def __init__(self, dofs: list[str], specimen: Specimen) -> None:
        super().__init__()
        if len(dofs) not in (1, 2):
            raise ModuleError(f"spring module: give one DOF (to the ground) or two (between them), got {len(dofs)}")
        self.dofs = tuple(Dof(name) for name in dofs)
        self.specimen = specimen
        self._direction = np.array([1.0]) if len(dofs) == 1 else np.array([-1.0, 1.0])
        self._committed = 0.0

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "SpringModule":
        dofs = config.get("dofs")
        if not isinstance(dofs, list):
            raise ModuleError("spring module: 'dofs' must be a list of one or two DOF names")
        return cls(dofs, build_specimen(config))

    def describe(self) -> Description:
        return Description(kind=self.kind, dofs=self.dofs)

    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        force, _tangent = self.specimen.trial(float(self._direction @ command.displacement))
        return command.displacement, force * self._direction

    def _accept(self, step: int) -> None:
        self.specimen.commit()

    def _discard(self) -> None:
        """The specimen's trial is always taken from its committed state: nothing to undo."""

    def _save_state(self) -> object:
        return getattr(self.specimen, "committed", None)

    def _load_state(self, state: object) -> None:
        if state is not None:
            self.specimen.committed = tuple(state)  # type: ignore[union-attr]
