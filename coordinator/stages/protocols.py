"""Cyclic quasi-static loading protocols: amplitude ladders from a yield displacement and cycle counts.

A cycle of amplitude A goes 0 -> +A -> 0 -> -A -> 0 in straight segments of ``steps_per_cycle / 4`` steps each.

- ``fema-461``: FEMA 461 (2007), Interim testing protocols for determining the seismic performance
  characteristics of structural and nonstructural components, section 2.9 (quasi-static cyclic testing):
  amplitudes a_{i+1} = 1.4 a_i, two cycles each, the last the target deformation (``last`` times the yield
  displacement) reached after ten amplitudes, so a_0 = 1.4^-9 a_last = 0.048 a_last.
- ``atc-24``: ATC-24 (Krawinkler, 1992), Guidelines for cyclic seismic testing of components of steel
  structures: six elastic cycles (here at half the yield displacement), three cycles at 1, 2 and 3 times the yield
  displacement, then two at each further multiple up to ``last``.
- ``custom``: ``amplitudes`` (multiples of the yield displacement) with ``cycles`` each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Integer, Key, Number, Numbers, Schema, Text

LADDERS = ("fema-461", "atc-24", "custom")
FEMA_461_RATIO, FEMA_461_AMPLITUDES = 1.4, 10

PROTOCOL = Schema("[[stages]].protocol", "A cyclic amplitude ladder (coordinator/stages/protocols.py).", {
    "ladder": Key(Text(LADDERS), "fema-461 (x1.4 per amplitude, two cycles each), atc-24 (6 elastic, 3 at 1-3 dy, "
                  "then 2 each) or custom", default="fema-461"),
    "yield_displacement": Key(Number("m", minimum=0, open_minimum=True), "the specimen's yield displacement dy",
                              required=True),
    "last": Key(Number(minimum=0, open_minimum=True), "the largest amplitude, in multiples of dy (fema-461, atc-24)",
                default=6.0),
    "amplitudes": Key(Numbers(element=Number(minimum=0, open_minimum=True)), "the amplitudes in multiples of dy "
                      "(custom)"),
    "cycles": Key(Integer(1), "cycles at each amplitude (custom)", default=2),
    "steps_per_cycle": Key(Integer(4), "steps of one cycle, a multiple of 4", default=40),
})


def ladder(amplitudes: np.ndarray, cycles: np.ndarray, steps_per_cycle: int) -> np.ndarray:
    """The targets of every step (after the start at 0): ``cycles[i]`` cycles at ``amplitudes[i]`` each."""
    quarter = steps_per_cycle // 4
    shape = np.concatenate([np.arange(1, quarter + 1), quarter - np.arange(1, 2 * quarter + 1),
                            -quarter + np.arange(1, quarter + 1)]) / quarter  # 0 -> 1 -> -1 -> 0, the 0 at the start left out
    return np.concatenate([np.tile(a * shape, int(c)) for a, c in zip(amplitudes, cycles)])


def amplitudes_of(table: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(amplitudes in multiples of dy, cycles at each) of a validated protocol table."""
    kind, last = table.get("ladder", "fema-461"), float(table.get("last", 6.0))
    if kind == "fema-461":
        amplitudes = last * FEMA_461_RATIO ** np.arange(1 - FEMA_461_AMPLITUDES, 1, dtype=float)
        return amplitudes, np.full(amplitudes.size, 2)
    if kind == "atc-24":
        beyond = np.arange(4.0, np.floor(last) + 1)
        return (np.r_[0.5, 1.0, 2.0, 3.0, beyond],
                np.r_[6, 3, 3, 3, np.full(beyond.size, 2)].astype(int))
    amplitudes = np.asarray(table["amplitudes"], float)
    return amplitudes, np.full(amplitudes.size, int(table.get("cycles", 2)))


def protocol_history(table: Mapping[str, Any]) -> np.ndarray:
    """The displacement of every step (m) of a validated protocol table."""
    amplitudes, cycles = amplitudes_of(table)
    return float(table["yield_displacement"]) * ladder(amplitudes, cycles, int(table.get("steps_per_cycle", 40)))
