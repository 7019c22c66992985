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

from hybridsim.modules.config_schema import ConfigError
from hybridsim.modules.network import NETWORK, network_of
from hybridsim.modules.registry import CLIENT_KINDS

__all__ = ["NETWORK", "network_of", "networked", "parse_option", "with_networks"]

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
