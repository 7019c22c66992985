"""The envelope of one limited quantity over a rehearsal's trials, against its limit.

A site's ``limits`` table (hybridsim.modules.limits: displacement, velocity, force, one number for every DOF
or one per DOF) names what the run will refuse; each trial's peak |value| of that quantity at that DOF is
set against it.  The probability of exceeding is the fraction of trials whose peak is above the limit (an
estimate from N trials: with none exceeding, below about 3 / N at 95 % confidence, the rule of three).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LIMITED = {"displacement": "m or rad", "velocity": "m/s or rad/s", "force": "N or N*m"}
"""the site's limits a rehearsal sets the trials' peaks against, with their units"""


@dataclass(frozen=True)
class Limit:
    """One limit of the site: ``limits.<kind>`` at the interface DOF ``dof``."""

    kind: str
    dof: str
    value: float

    @property
    def name(self) -> str:
        return f"limits.{self.kind} at {self.dof}"


def site_limits(table: Mapping[str, Any] | None, dofs: Sequence[str]) -> list[Limit]:
    """The limits of a site's ``limits`` table, one per kind of :data:`LIMITED` and DOF."""
    found = []
    for kind in LIMITED:
        value = (table or {}).get(kind)
        if value is None:
            continue
        values = [float(value)] * len(dofs) if isinstance(value, (int, float)) else [float(v) for v in value]
        found += [Limit(kind, dof, v) for dof, v in zip(dofs, values)]
    return found


def envelope(limit: Limit, peaks: Sequence[float | None], trial_names: Sequence[str]) -> dict[str, Any]:
    """The row of the sheet: the peaks of every trial (None: not measured), their maximum, the probability of
    exceeding and the trials above the limit."""
    known = [(p, name) for p, name in zip(peaks, trial_names) if p is not None]
    over = [name for p, name in known if p > limit.value]
    return {"limit": limit.name, "kind": limit.kind, "dof": limit.dof, "value": limit.value,
            "unit": LIMITED[limit.kind], "peaks": list(peaks),
            "max": max((p for p, _ in known), default=None), "ratio": max((p for p, _ in known), default=0.0)
            / limit.value, "probability": len(over) / len(known) if known else None, "exceeded_in": over,
            "measured": bool(known)}
