"""How a module's steps reach its site: the ``transport`` key and the ``network`` table (an emulated network path
in front of the site, a TCP proxy; docs/realtime.md).

Declared once here for every place that takes them: a [[modules]] entry of an experiment
(:mod:`hybridsim.coordinator.experiment`) and an experimental site's ``backend`` (its link to a plant daemon).
"""

from __future__ import annotations

from typing import Any, get_args

from hybridsim.modules.config_schema import ConfigError, Integer, Key, Number, Schema, Text
from hybridsim.wire.channels import Transport
from hybridsim.wire.network import Network

TRANSPORT = Key(Text(get_args(Transport)), "how steps reach a daemon: its step link ('link'), the gRPC Steps stream "
                "('stream') or one gRPC call per step ('unary'); 'auto': the link to a site on this machine, else the "
                "stream (docs/wire_speed.md); only for a module at an address", default="auto")

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
