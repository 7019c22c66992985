"""The labs' own protocols, one family: each is a folder here (``codec``, ``server``, ``client``) and one line of
:data:`PROTOCOLS`.

A site serves its module on a protocol beside gRPC (``hybridsim site KIND --OPTION HOST:PORT``, the options made
from this table); the coordinator speaks it through the protocol's client module kind (``kind = "openfresco"``).
What the servers share (a TCP listener, the servicer's session, the byte helpers) is :mod:`.base`.

Adding a protocol: a folder ``NAME/`` with ``codec.py`` (the bytes), ``server.py`` (a class taking ``(servicer,
listen, table, max_message_bytes)`` with ``address`` and ``stop()``, its steps through
:class:`~hybridsim.wire.protocols.base.ChannelSession`), ``client.py`` and its module kind in
``modules/NAME.py`` (registered in ``hybridsim.modules.registry.KINDS``); then one line here.  These protocols
have no authentication: a site serves them on loopback unless ``--insecure`` (docs/interop.md).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, NamedTuple

from hybridsim.registry import resolve

log = logging.getLogger("hybridsim.site")


class LabProtocol(NamedTuple):
    """One protocol a site serves: its server class (a registry line), the site configuration's table that
    configures it, the module kind that speaks it from the coordinator, and the site option's help."""

    server: str
    table: str
    client: str
    help: str


PROTOCOLS: Mapping[str, LabProtocol] = {
    "openfresco": LabProtocol("hybridsim.wire.protocols.openfresco.server:SimAppServer", "openfresco", "openfresco",
                              "OpenSees/OpenFresco's SimApp protocol (genericClient elements, ShadowExpSites)"),
    "generic-tcp": LabProtocol("hybridsim.wire.protocols.openfresco.server:GenericTCPServer", "openfresco",
                               "openfresco", "a lab's controller that OpenFresco's ECGenericTCP control drives "
                               "(e.g. hybridsim site plant)"),
    "simcor": LabProtocol("hybridsim.wire.protocols.simcor.server:SimCorServer", "simcor", "simcor",
                          "UI-SIMCOR's LabView1/LabView2 protocols (the config's [simcor] table maps control points)"),
}
"""site option (``--openfresco``) -> the protocol"""


def refusal_of_address(option: str, listen: str, insecure: bool) -> str | None:
    """Why ``listen`` may not serve an unauthenticated protocol (None: it may)."""
    from hybridsim.wire.security import is_loopback

    if insecure or is_loopback(listen):
        return None
    return (f"{option} {listen}: this protocol has no authentication; serve it on loopback (127.0.0.1) and "
            "tunnel it, or give --insecure on a trusted private network")


def serve_protocols(servicer: object, addresses: Mapping[str, str], tables: Mapping[str, Any],
                    max_message_bytes: int) -> dict[str, Any]:
    """Serve the servicer's module on each protocol of ``addresses`` (option -> HOST:PORT), configured by its
    table of the site's configuration (``tables``: table name -> table); the running servers.  A failure stops
    those already started."""
    running: dict[str, Any] = {}
    try:
        for option, listen in addresses.items():
            protocol = PROTOCOLS[option]
            running[option] = resolve(protocol.server)(servicer, listen, tables.get(protocol.table), max_message_bytes)
            log.info("site %s: serving %s on %s (no authentication)", servicer.site, option,  # type: ignore[attr-defined]
                     running[option].address)
    except BaseException:
        for server in running.values():
            server.stop()
        raise
    return running
