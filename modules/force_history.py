"""A force target over time (``force_control[].history``), the same for every module kind that holds a DOF at a
force (an `opensees` module's load pattern, an experimental site's force loop): linear between the points and held
after the last; the value at t = 0 is the one ramped in before the test."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Key, Number, Numbers, Schema
from hybridsim.wire.contract import ModuleError

FORCE_HISTORY = Schema("force_control[].history", "A force target over time, linear between the points and held "
                       "after the last: the target of a command at time t (the value at t = 0 ramped in before the "
                       "test).", {
    "time": Key(Numbers("s", element=Number(minimum=0)), "increasing times, the first 0", required=True),
    "force": Key(Numbers("N or N*m"), "the target at each time", required=True),
})

History = tuple[tuple[float, ...], tuple[float, ...]]
"""(times s, forces N or N*m)"""


def force_history(table: Mapping[str, Any], where: str) -> History:
    """The (times, forces) of a validated ``history`` table; ModuleError naming ``where`` unless there are as many
    forces as times, the times increasing from 0."""
    times, values = tuple(map(float, table["time"])), tuple(map(float, table["force"]))
    if len(times) != len(values) or not times or times[0] != 0.0 or any(np.diff(times) <= 0):
        raise ModuleError(f"{where}: give as many forces as times, the times increasing from 0")
    return times, values


def force_at(history: History, time: float) -> float:
    """The target at ``time`` (s)."""
    return float(np.interp(time, *history))
