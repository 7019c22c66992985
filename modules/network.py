"""The ``network`` table: an emulated network path in front of a module's site (a TCP proxy; docs/realtime.md).

Declared once here for every place that takes one: a [[modules]] entry of an experiment
(:mod:`hybridsim.coordinator.network`) and an experimental site's ``backend`` (its link to a plant daemon).
"""

from __future__ import annotations

from typing import Any

from hybridsim.modules.config_schema import ConfigError, Integer, Key, Number, Schema
from hybridsim.wire.network import Network

NETWORK = Schema("network", "An emulated network path to the module's site (a TCP proxy in front of it; every "
                 "transport and lab protocol goes through it).", {
                     "round_trip_s": Key(Number("s", minimum=0), "mean round trip added (each way half)", default=0.0),
                     "jitter_s": Key(Number("s", minimum=0),
                                     "each packet's one-way delay varies uniformly within ± this; at most half the "
                                     "round trip", default=0.0),
                     "loss": Key(Number(minimum=0, maximum=0.5),
                                 "probability that a TCP segment is lost; TCP resends it after retransmit_s "
                                 "(doubling at each further loss): it arrives late", default=0.0),
                     "retransmit_s": Key(Number("s", minimum=0, open_minimum=True),
                                         "wait before a lost segment is resent; default round_trip_s + 0.2 s "
                                         "(Linux's minimum retransmission timeout)"),
                     "seed": Key(Integer(0), "seed of the jitter and loss draws (default: a fresh one)"),
                 })


def network_of(table: Any, where: str) -> Network:
    """The :class:`Network` of a ``network`` table at ``where`` (ConfigError naming the key if it is wrong)."""
    NETWORK.check(table, where)
    try:
        return Network(**table)
    except ValueError as exc:
        raise ConfigError("", where, f": {exc}") from None
