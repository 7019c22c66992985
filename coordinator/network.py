"""The emulated network of a module: the ``network`` table of its [[modules]] entry and ``hybridsim run --network``.

::

    [[modules]]
    name = "lab"
    kind = "experimental"
    address = "local"
    network = { round_trip_s = 0.020, jitter_s = 0.002, loss = 0.001, seed = 7 }

    hybridsim run EXPERIMENT.toml --network round_trip_s=0.02,jitter_s=0.002      # every module at an address
    hybridsim run EXPERIMENT.toml --network lab:round_trip_s=0.06 --network frame:loss=0.01

A module at an address (``"local"`` or ``HOST:PORT``) or of a lab-protocol kind (``openfresco``,
``simcor``) may have one; every connection to it then goes through a proxy that emulates the path
(:mod:`hybridsim.wire.network`, docs/realtime.md).  ``--network`` sets the table of the modules it names
(all that may have one when it names none), replacing the file's, and is stored with the experiment
(``hybridsim resume`` runs across the same network).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hybridsim.modules.config_schema import ConfigError, Integer, Key, Number, Schema
from hybridsim.modules.registry import CLIENT_KINDS
from hybridsim.wire.network import Network

NETWORK = Schema("network", "An emulated network path between the coordinator and the module (a TCP proxy in front "
                 "of it; every transport and lab protocol goes through it).", {
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


def networked(module: Mapping[str, Any]) -> bool:
    """Whether a [[modules]] table may have a network: a module at an address or of a lab-protocol kind."""
    return "address" in module or module.get("kind") in CLIENT_KINDS


def parse_option(text: str, option: str = "--network") -> tuple[str | None, dict[str, Any]]:
    """``[MODULE:]key=value,key=value`` of ``option`` (``--network``; ``hybridsim network``'s ``--path``): the module
    named (None: all) and the table."""
    name, colon, rest = text.partition(":")
    if not colon or "=" in name:
        name, rest = None, text
    table: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, equals, value = item.partition("=")
        if not equals:
            raise ConfigError("", f"{option} {text}", f": give key=value pairs (e.g. round_trip_s=0.02,jitter_s=0.002), "
                                                      f"not {item!r}")
        try:
            table[key.strip()] = int(value) if value.strip().lstrip("-").isdigit() else float(value)
        except ValueError:
            raise ConfigError("", f"{option} {text}", f": {key.strip()} must be a number, not {value!r}") from None
    if not table:
        raise ConfigError("", f"{option} {text}", ": give key=value pairs, e.g. round_trip_s=0.02")
    return name, table


def with_networks(experiment: dict[str, Any], options: Sequence[str]) -> dict[str, Any]:
    """The experiment table with the ``network`` tables that ``--network`` ``options`` set (ConfigError naming
    the option when one names no module, or a module without an address)."""
    if not options:
        return experiment
    modules = [dict(m) if isinstance(m, dict) else m for m in experiment.get("modules", [])]
    for text in options:
        name, table = parse_option(text)
        network_of(table, "--network")
        chosen = [m for m in modules if isinstance(m, dict) and (name is None or m.get("name") == name)]
        if name is not None and not chosen:
            names = ", ".join(str(m.get("name")) for m in modules if isinstance(m, dict))
            raise ConfigError("", f"--network {text}", f": no module is named {name!r} (modules: {names})")
        if name is not None and not networked(chosen[0]):
            raise ConfigError("", f"--network {text}", f": module {name!r} runs in the coordinator's process, with "
                                                       "no network to emulate; give it an address (\"local\" or "
                                                       "HOST:PORT)")
        chosen = [m for m in chosen if networked(m)]
        if not chosen:
            raise ConfigError("", f"--network {text}", ": no module runs at an address or as a local daemon "
                                                       "(address = \"local\"), so there is no network to emulate")
        for module in chosen:
            module["network"] = dict(table)
    return {**experiment, "modules": modules}
