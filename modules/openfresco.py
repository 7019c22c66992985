"""The `openfresco` module kind: a substructure behind OpenSees/OpenFresco's SimApp protocol.

    [[modules]]
    name = "column"
    kind = "openfresco"
    address = "127.0.0.1:8090"      # where the server listens (the coordinator connects)
    config = { dofs = ["x1", "x2"], server = "adapter" }

``server``: ``adapter`` (an OpenSees process with an ``adapter`` element), ``elem-server`` (OpenFresco's
SimApp element or site server, or a hybridsim site's ``--openfresco``), ``lab-server`` (OpenFresco's lab
server, an ActorExpSite), ``generic-tcp`` (a lab's controller that OpenFresco's ECGenericTCP drives, or a
hybridsim site's ``--generic-tcp``).  Optional: ``kinds`` (translation or rotation per DOF), ``data_size`` (doubles
per message, default 256), ``tag`` (the ShadowExpSite tag a lab server sees), ``deadline_s`` (s, each reply).

An adapter element and a controller cannot revert: every trial becomes a committed state (see
:mod:`hybridsim.modules.protocol_client` for what that means for the pre-test and implicit schemes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Integer, Key, Schema, Text
from hybridsim.modules.protocol_client import COMMON, COMMON_KEYS, ProtocolClientModule, common_config
from hybridsim.wire.contract import Description, Dof, ModuleError
from hybridsim.wire.openfresco.client import COMMITS, SERVERS, SimAppClient


class OpenFrescoModule(ProtocolClientModule):
    """Each step: setTrialResponse, then the measured displacement and force; the commit as commitState."""

    kind = "openfresco"
    CONFIG = Schema("openfresco", "A client of OpenFresco's SimApp protocol: the lab's server moves its actuators "
                    "(docs/interop.md).", {
                        **COMMON,
                        "server": Key(Text(SERVERS), "the kind of SimApp server", required=True),
                        "data_size": Key(Integer(1), "SimApp's dataSize (numbers per message)", default=256),
                        "tag": Key(Integer(1), "the experimental element's tag", default=1),
                    })

    def __init__(self, dofs: tuple[Dof, ...], client: SimAppClient) -> None:
        super().__init__(dofs, client)
        self.client: SimAppClient = client
        self.reverts = client.server in COMMITS

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "OpenFrescoModule":
        address, dofs, deadline = common_config(config, cls.kind, COMMON_KEYS | {"server", "data_size", "tag"})
        server = config.get("server")
        if server not in SERVERS:
            raise ModuleError(f"openfresco module: server must be one of {', '.join(SERVERS)}, not {server!r}")
        numbers = {}
        for key, default in (("data_size", 256), ("tag", 1)):
            value = config.get(key, default)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ModuleError(f"openfresco module: {key} must be a positive integer")
            numbers[key] = value
        return cls(dofs, SimAppClient(address, len(dofs), server, deadline, **numbers))

    def describe(self) -> Description:
        description = super().describe()
        return Description(description.kind, description.dofs, can_checkpoint=False,
                           info={**description.info, "server": self.client.server})
