"""The indicators' per-step datasets of a results file: their names, widths and units.

Written into each step's row by :class:`~hybridsim.coordinator.integrity.monitor.IntegrityMonitor` before the row
is queued for the results writer, so they are rows like the others (checksummed, truncated with them on a resume)::

    /integrity/balance                       (n, 7)  input, kinetic, damped, restoring, elastic, hysteretic and
                                                     residual energy [J] (:mod:`~hybridsim.coordinator.integrity.energy`)
    /integrity/energy_error                  (n,)    the whole structure's: the watched sites' E_err over E_in [1]
    /integrity/modules/<name>/energy_error   (n,)    the site's E_err / E_in [1]
    /integrity/modules/<name>/tracking       (n, m)  each DOF's tracking indicator TI [m^2 or rad^2]
    /integrity/modules/<name>/delay          (n, m)  each DOF's online delay [s]; 0 until its memory has passed

A threshold is compared with the energy error, and with the largest |TI| and |delay| over the site's DOFs.
"""

from __future__ import annotations

from collections.abc import Mapping

from hybridsim.coordinator.units import DISPLACEMENT
from hybridsim.wire.contract import Description

BALANCE = "integrity/balance"
BALANCE_TERMS = ("input", "kinetic", "damped", "restoring", "elastic", "hysteretic", "residual")
"""the columns of :data:`BALANCE` (J), as :class:`~hybridsim.coordinator.integrity.energy.EnergyBalance` names them"""
ENERGY_ERROR = "integrity/energy_error"
INDICATORS = ("energy_error", "tracking", "delay")


def site_key(name: str, indicator: str) -> str:
    """The dataset of module ``name``'s ``indicator`` (one of :data:`INDICATORS`)."""
    return f"integrity/modules/{name}/{indicator}"


def indicator_columns(watched: Mapping[str, int]) -> dict[str, int]:
    """The datasets and their widths (0: one number a step) for the watched modules' DOF counts; none unwatched."""
    if not watched:
        return {}
    columns = {BALANCE: len(BALANCE_TERMS), ENERGY_ERROR: 0}
    for name, width in watched.items():
        columns |= {site_key(name, "energy_error"): 0, site_key(name, "tracking"): width,
                    site_key(name, "delay"): width}
    return columns


def indicator_labels(watched: Mapping[str, Description]) -> dict[str, dict[str, object]]:
    """The datasets' ``units`` and their ``columns`` or ``dofs`` (attributes by path), for each watched module's
    description."""
    if not watched:
        return {}
    out: dict[str, dict[str, object]] = {BALANCE: {"units": ["J"] * len(BALANCE_TERMS), "columns": list(BALANCE_TERMS)},
                                         ENERGY_ERROR: {"units": "1"}}
    for name, description in watched.items():
        dofs = list(description.dof_names)
        out[site_key(name, "energy_error")] = {"units": "1"}
        out[site_key(name, "tracking")] = {"units": [f"{DISPLACEMENT[d.kind]}^2" for d in description.dofs],
                                           "dofs": dofs}
        out[site_key(name, "delay")] = {"units": ["s"] * len(dofs), "dofs": dofs}
    return out
