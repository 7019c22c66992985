"""Time integrators behind one interface (see ``base``), selectable by name.

``INTEGRATORS`` is the registry (``[integrator] kind = "..."``): one line per scheme, imported when
used.  A new scheme is one file with an :class:`Integrator` subclass, which declares its options once
(``CONFIG``, a :class:`~hybridsim.modules.config_schema.Schema`), and one line here.  ``CONFIG`` here
declares the whole ``[integrator]`` table: ``kind`` chooses the scheme, whose ``CONFIG`` takes the rest.
"""

from __future__ import annotations

from hybridsim.coordinator.integrators.base import Integrator, IntegratorError
from hybridsim.modules.config_schema import Schema, Variants
from hybridsim.registry import load

INTEGRATORS: dict[str, str] = {
    "alpha-os": "hybridsim.coordinator.integrators.alpha_os:AlphaOSIntegrator",
    "newmark": "hybridsim.coordinator.integrators.newmark:NewmarkImplicitIntegrator",
    "central-difference": "hybridsim.coordinator.integrators.explicit:CentralDifferenceIntegrator",
    "newmark-explicit": "hybridsim.coordinator.integrators.newmark_explicit:NewmarkExplicitIntegrator",
    "hht-explicit": "hybridsim.coordinator.integrators.hht_explicit:HHTExplicitIntegrator",
    "generalized-alpha-os": "hybridsim.coordinator.integrators.generalized_alpha_os:GeneralizedAlphaOSIntegrator",
    "kr-alpha": "hybridsim.coordinator.integrators.kr_alpha:KRAlphaIntegrator",
    "cr": "hybridsim.coordinator.integrators.kr_alpha:CRIntegrator",
    "hht-fixed-iterations": "hybridsim.coordinator.integrators.fixed_iterations:HHTFixedIterationsIntegrator",
    "newmark-fixed-iterations": "hybridsim.coordinator.integrators.fixed_iterations:NewmarkFixedIterationsIntegrator",
}

CONFIG = Schema("integrator", "The time integration scheme over the condensed DOFs and its options.",
                variants=Variants("kind", INTEGRATORS, default="alpha-os", doc="the scheme"))


def integrator_class(kind: str) -> type[Integrator]:
    """The integrator registered as ``kind`` (KeyError if none is)."""
    return load(INTEGRATORS, kind)


__all__ = ["CONFIG", "INTEGRATORS", "Integrator", "IntegratorError", "integrator_class"]
