"""The relaxation check (UI-SIMCOR's CheckRelax): the force change while the site holds a step's target.

After the control samples that reach a step's target, a site with a ``relaxation`` table holds that target for
``hold_samples`` more samples (through its gate, as any command) and compares the interface forces at the end of
the hold with those when the target was reached: a change beyond ``threshold`` (N, N*m) at any DOF is the
specimen relaxing (or a load cell drifting) by more than the test accepts. ``action = "warn"`` logs it and counts
it (``relaxation_warnings``, with the step's answer); ``"hold"`` puts the site on hold through its gate (every
command refused until an operator clears it) and refuses the step. The step answers the forces at the end of
the hold: what the specimen carries when the coordinator moves on. Lockstep only (a site on its own clock holds
its samples by the wall clock; refused with it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Integer, Key, Number, Schema, Text
from hybridsim.modules.experimental.gate import ActuatorLimitExceeded, Interlock

log = logging.getLogger("hybridsim.site")

CONFIG = Schema("relaxation", "The relaxation check after every step (UI-SIMCOR's CheckRelax; lockstep sites).", {
    "hold_samples": Key(Integer(1, unit="samples"), "control samples the step's target is held before the check",
                        default=4),
    "threshold": Key(Number("N or N*m", 0, open_minimum=True), "the largest force change over the hold at any "
                     "interface DOF", required=True),
    "action": Key(Text(("warn", "hold")), "past the threshold: log and count it, or hold the site (an operator "
                  "clears it) and refuse the step", default="warn"),
})


class Relaxation:
    """The declared check of one site: how long to hold, the threshold, what to do past it."""

    def __init__(self, table: Mapping[str, Any], interlock: Interlock) -> None:
        self.hold_samples = int(table.get("hold_samples", 4))
        self.threshold = float(table["threshold"])
        self.action = str(table.get("action", "warn"))
        self.interlock = interlock
        self.warnings = 0
        self.largest = 0.0
        """the largest force change seen over a hold (N, N*m)"""

    def check(self, before: np.ndarray, after: np.ndarray, sample: int) -> None:
        """Compare the interface forces before and after a hold that ended at ``sample``; warn or hold."""
        change = np.abs(np.asarray(after, float) - np.asarray(before, float))
        self.largest = max(self.largest, float(change.max(initial=0.0)))
        over = np.flatnonzero(change > self.threshold)
        if not over.size:
            return
        i = int(over[0])
        reason = (f"relaxation: the force at interface DOF {i + 1} changed by {change[i]:.6g} over a hold of "
                  f"{self.hold_samples} samples (sample {sample}), beyond relaxation.threshold = {self.threshold:.6g}")
        if self.action == "hold":
            self.interlock.hold(reason)
            raise ActuatorLimitExceeded(f"{reason}; the site is held until an operator clears it")
        self.warnings += 1
        log.warning("site: %s (warning %d)", reason, self.warnings)
