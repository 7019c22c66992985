"""Time integrators behind one interface (see ``base``), selectable by name."""

from __future__ import annotations

from hybridsim.coordinator.integrators.alpha_os import AlphaOSIntegrator
from hybridsim.coordinator.integrators.base import Integrator, IntegratorError
from hybridsim.coordinator.integrators.explicit import CentralDifferenceIntegrator
from hybridsim.coordinator.integrators.newmark import NewmarkImplicitIntegrator

INTEGRATORS: dict[str, type[Integrator]] = {
    AlphaOSIntegrator.name: AlphaOSIntegrator,
    NewmarkImplicitIntegrator.name: NewmarkImplicitIntegrator,
    CentralDifferenceIntegrator.name: CentralDifferenceIntegrator,
}

__all__ = ["AlphaOSIntegrator", "CentralDifferenceIntegrator", "INTEGRATORS", "Integrator", "IntegratorError",
           "NewmarkImplicitIntegrator"]
