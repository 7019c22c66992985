"""The `simcor` module kind: a substructure behind UI-SIMCOR's LabView1/LabView2 protocols.

    [[modules]]
    name = "pier"
    kind = "simcor"
    address = "127.0.0.1:11997"     # where the module listens (a LabVIEW or LBCB plugin, a hybridsim site)
    config = { dofs = ["x1", "r1"], kinds = ["translation", "rotation"],
               control_points = { "MDL-00-01" = { x = "x1", z = "r1" } }, protocol = "LabView1" }

``protocol``: ``LabView1`` (propose, execute, get-control-point; the default) or ``LabView2`` (the
propose executes and its reply carries the values).  Optional: ``deadline_s`` (s, each reply),
``session`` (the name sent with open-session), ``force_control`` (``{ axial = -1.5e6 }``: DOFs the module
holds at a force, N or N*m, each on a control point's axis; every propose commands it there with quantity force,
e.g. a column's axial load; not one of the coordinator's DOFs, docs/force_control.md).

The protocol has no commit: the module commits a step when the next one is proposed, so a trial cannot
be reverted (see :mod:`hybridsim.modules.protocol_client`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Free, Key, Schema, Text
from hybridsim.modules.protocol_client import COMMON, COMMON_KEYS, ProtocolClientModule, common_config
from hybridsim.wire.contract import ModuleError
from hybridsim.wire.protocols.simcor.client import SimCorClient
from hybridsim.wire.protocols.simcor.codec import PROTOCOLS, ControlPoints


class SimCorModule(ProtocolClientModule):
    """Each step one transaction (propose, execute, get-control-point); no commit on the wire."""

    kind = "simcor"
    reverts = False
    CONFIG = Schema("simcor", "A client of UI-SIMCOR's LabVIEW protocol (docs/interop.md).", {
        **COMMON,
        "control_points": Key(Free(), "control points: { \"MDL-00-01\" = { x = \"u1\", z = \"r1\" } }",
                              required=True),
        "protocol": Key(Text(PROTOCOLS), "LabVIEW protocol version", default="LabView1"),
        "session": Key(Text(), "the session's name (no tabs or line ends)", default="hybridsim"),
        "force_control": Key(Free(), "DOF name -> the force (N, N*m) every propose commands at its control point's "
                             "axis, e.g. { axial = -1.5e6 }; not one of the coordinator's DOFs"),
    })

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "SimCorModule":
        address, dofs, deadline = common_config(config, cls.kind, COMMON_KEYS | {"control_points", "protocol",
                                                                                 "session", "force_control"})
        names = [dof.name for dof in dofs]
        forces = _forces(config.get("force_control", {}))
        points = ControlPoints.from_table(config.get("control_points"), names, "simcor module: control_points",
                                          list(forces))
        if len(points.forced) < len(forces):
            raise ModuleError(f"simcor module: force_control: put {', '.join(forces)} on a control point's axis, "
                              "e.g. control_points = { \"MDL-00-01\" = { x = \"x\", y = \"axial\" } }")
        protocol = config.get("protocol", "LabView1")
        if protocol not in PROTOCOLS:
            raise ModuleError(f"simcor module: protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
        session = config.get("session", "hybridsim")
        if not isinstance(session, str) or not session or "\t" in session or "\n" in session:
            raise ModuleError("simcor module: session must be a name without tabs or line ends")
        client = SimCorClient(address, points, [dof.kind for dof in dofs], protocol, deadline, session,
                              list(forces.values()))
        return cls(dofs, client)


def _forces(table: Mapping[str, Any]) -> dict[str, float]:
    """``force_control``'s DOF name -> force (N, N*m); ModuleError naming a value that is not a number."""
    for name, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ModuleError(f"simcor module: force_control.{name} must be a force in N (or N*m), e.g. -1.5e6, "
                              f"not {value!r}")
    return {name: float(value) for name, value in table.items()}
