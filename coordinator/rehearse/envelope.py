"""The envelope of one limited quantity over a rehearsal's trials, against its limit.

The limits are the site's own, the ones its gate will enforce (hybridsim.modules.limits and the experimental
site's configuration): ``limits`` (displacement, velocity, force per interface DOF), ``gate.increment`` and
``gate.velocity`` (per actuator, the command from the measured stroke) and each actuator's ``stroke`` and
``force``; each a number for every DOF or actuator, or one each.  Each trial's peak |value| of that quantity is
set against it.  The probability of exceeding is the fraction of trials whose peak is above the limit (an
estimate from N trials: with none exceeding, below about 3 / N at 95 % confidence, the rule of three).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

UNITS = {("limits", "displacement"): "m or rad", ("limits", "velocity"): "m/s or rad/s",
         ("limits", "force"): "N or N*m", ("gate", "increment"): "m", ("gate", "velocity"): "m/s",
         ("actuators", "stroke"): "m", ("actuators", "force"): "N"}
"""(table, key) of the site's configuration a rehearsal sets the trials' peaks against, with its unit"""


@dataclass(frozen=True)
class Limit:
    """One limit of the site: ``<table>.<kind>`` at the interface DOF or actuator ``dof`` (number ``index``)."""

    table: str
    kind: str
    dof: str
    index: int
    value: float

    @property
    def name(self) -> str:
        return f"{self.table}.{self.kind} at {self.dof}"


def _per(value: Any, count: int) -> list[float]:
    return [float(value)] * count if isinstance(value, (int, float)) else [float(v) for v in value]


def site_limits(site: Mapping[str, Any], dofs: Sequence[str], actuators: Sequence[str]) -> list[Limit]:
    """Every limit a site's configuration declares (see the module's docstring), in :data:`UNITS`' order."""
    found = []
    tables = {"limits": site.get("limits") or {}, "gate": site.get("gate") or {}}
    for table, kind in UNITS:
        names = dofs if table == "limits" else actuators
        if table == "actuators":
            values = [(a.get(kind) if isinstance(a, Mapping) else None) for a in site.get("actuators") or ()]
        else:
            values = [None] * len(names) if tables[table].get(kind) is None else _per(tables[table][kind], len(names))
        found += [Limit(table, kind, name, i, v) for i, (name, v) in enumerate(zip(names, values)) if v is not None]
    return found


def envelope(limit: Limit, peaks: Sequence[float | None], trial_names: Sequence[str]) -> dict[str, Any]:
    """The row of the sheet: the peaks of every trial (None: not measured), their maximum, the probability of
    exceeding and the trials above the limit."""
    known = [(p, name) for p, name in zip(peaks, trial_names) if p is not None]
    over = [name for p, name in known if p > limit.value]
    return {"limit": limit.name, "kind": limit.kind, "dof": limit.dof, "value": limit.value,
            "unit": UNITS[limit.table, limit.kind], "peaks": list(peaks),
            "max": max((p for p, _ in known), default=None), "ratio": max((p for p, _ in known), default=0.0)
            / limit.value, "probability": len(over) / len(known) if known else None, "exceeded_in": over,
            "measured": bool(known)}
