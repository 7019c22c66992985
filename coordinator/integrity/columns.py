"""The indicators' per-step datasets of a results file: their names, widths and units.

Written into each step's row by :class:`~hybridsim.coordinator.integrity.monitor.IntegrityMonitor` before the row
is queued for the results writer, so they are rows like the others (checksummed, truncated with them on a resume)::

    /integrity/balance                       (n, 7)  input, kinetic, damped, restoring, elastic, hysteretic and
                                                     residual energy [J] (see :mod:`.energy`)
    /integrity/energy_error                  (n,)    the whole structure's: the watched sites' E_err over E_in [1]
    /integrity/modules/<name>/energy_error   (n,)    the site's E_err / E_in [1]
    /integrity/modules/<name>/tracking       (n, m)  each DOF's tracking indicator TI [m^2 or rad^2]
    /integrity/modules/<name>/delay          (n, m)  each DOF's online delay [s]; 0 until its memory has passed

A threshold is compared with the energy error, and with the largest |TI| and |delay| over the site's DOFs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.recorder.read import DamagedResults, read_rows
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


def compared(arrays: Mapping[str, np.ndarray], name: str) -> dict[str, np.ndarray]:
    """Module ``name``'s indicators over the rows of ``arrays`` as a threshold is compared with them: its energy
    error (1), the largest |TI| (m^2) and |delay| (s) over its DOFs."""
    return {"energy_error": arrays[site_key(name, "energy_error")],
            **{k: np.abs(arrays[site_key(name, k)]).max(axis=1, initial=0.0) for k in ("tracking", "delay")}}


def crossings(arrays: Mapping[str, np.ndarray], rules: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """(module, indicator, row) of the first row of ``arrays`` (rows of a results file's datasets) at which each
    watched module's recorded indicator passed its threshold (``rules``: each module's
    :class:`~hybridsim.coordinator.integrity.rules.Rule`), as the monitor compared it; none without the datasets."""
    out = []
    for name, rule in rules.items():
        if site_key(name, "energy_error") not in arrays:
            continue
        values = compared(arrays, name)
        for indicator, threshold in rule.thresholds.items():
            above = np.flatnonzero(values[indicator] > threshold)
            if above.size:
                out.append((name, indicator, int(above[0])))
    return sorted(out, key=lambda c: c[2])


def acted_after(path: Path, rules: Mapping[str, Any], first: int, attrs: Mapping[str, Any]
                ) -> frozenset[tuple[str, str]]:
    """The (module, indicator) that acted after a results file's checkpoint at row ``first - 1``, before its run
    stopped: those its summary lists as acted (``attrs``: the file's attributes; a run held, then resumed and
    refused while held, lists them again) and those its rows from ``first`` on passed (a run killed: no summary).
    A row that fails its checksum is left out (a resume does not need those rows)."""
    if not rules:
        return frozenset()
    said = json.loads(attrs.get("summary") or "{}").get("integrity", {}).get("acted", [])
    try:
        rows = read_rows(path, first, int(attrs.get("completed_steps", first)))
    except DamagedResults:
        rows = {}
    return frozenset([(name, indicator) for name, indicator in said]
                     + [(name, indicator) for name, indicator, _ in crossings(rows, rules)])


def require_kept(stored: Mapping[str, np.ndarray], columns: Mapping[str, int], path: Path) -> None:
    """Refuse in one line to resume a results file (``stored``: its rows) that lacks the indicator datasets of
    ``columns`` (a window's): one written before they were rows of the file."""
    missing = [key for key in columns if key.startswith("integrity/") and key not in stored]
    if missing:
        raise UsageError(f"{path} has no /{missing[0]}: it was written before [integrity]'s indicators were kept "
                         "per step, and cannot be resumed with them; run the experiment again")
