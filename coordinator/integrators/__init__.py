"""Time integrators behind one interface (see ``base``), selectable by name.

``INTEGRATORS`` is the registry (``[integrator] kind = "..."``): one line per scheme, imported when
used.  A new scheme is one file with an :class:`Integrator` subclass, which declares its options
(``options``) and checks their values (``check_options``), and one line here.
"""

from __future__ import annotations

from hybridsim.coordinator.integrators.base import Integrator, IntegratorError
from hybridsim.registry import load

INTEGRATORS: dict[str, str] = {
    "alpha-os": "hybridsim.coordinator.integrators.alpha_os:AlphaOSIntegrator",
    "newmark": "hybridsim.coordinator.integrators.newmark:NewmarkImplicitIntegrator",
    "central-difference": "hybridsim.coordinator.integrators.explicit:CentralDifferenceIntegrator",
}


def integrator_class(kind: str) -> type[Integrator]:
    """The integrator registered as ``kind`` (KeyError if none is)."""
    return load(INTEGRATORS, kind)


__all__ = ["INTEGRATORS", "Integrator", "IntegratorError", "integrator_class"]
