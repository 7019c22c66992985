"""Time integrators behind one interface (see ``base``), selectable by name."""

from __future__ import annotations

from coordinator.integrators.alpha_os import AlphaOSIntegrator
from coordinator.integrators.base import Integrator, IntegratorError
from coordinator.integrators.explicit import CentralDifferenceIntegrator
from coordinator.integrators.newmark import NewmarkImplicitIntegrator

INTEGRATORS: dict[str, type[Integrator]] = {
    AlphaOSIntegrator.name: AlphaOSIntegrator,
    NewmarkImplicitIntegrator.name: NewmarkImplicitIntegrator,
    CentralDifferenceIntegrator.name: CentralDifferenceIntegrator,
}

__all__ = ["AlphaOSIntegrator", "CentralDifferenceIntegrator", "INTEGRATORS", "Integrator", "IntegratorError",
           "NewmarkImplicitIntegrator"]
