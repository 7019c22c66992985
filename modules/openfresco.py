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
per message, default 256), ``tag`` (the ShadowExpSite tag a lab server sees), ``deadline_s`` (s, each reply),
``path_independent`` (the server's substructure is elastic: it can be restored from a checkpoint).

An adapter element and a controller cannot revert: every trial becomes a committed state (see
:mod:`hybridsim.modules.protocol_client` for what that means for the pre-test and implicit schemes).

Checkpoints: the SimApp protocol cannot ask a server to save or load its state, so what this kind can restore
is what it can impose: the committed command (time, displacement, velocity, acceleration) of the checkpoint's
step is sent again as one trial (and committed where the server takes commits).  For an elastic substructure
(``path_independent = true``) that is its committed state; the force the server then measures must equal the
checkpointed one (to 1e-6 of its largest component), else the restore is refused (another model, or one that
remembered a path).  A path-dependent substructure (plasticity, damage) needs its whole committed path replayed
or the server's own saved state (OpenSees' ``database``), which the protocol cannot carry: an experiment with
checkpoints is refused for it at validation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Flag, Integer, Key, Schema, Text
from hybridsim.modules.protocol_client import COMMON, COMMON_KEYS, ProtocolClientModule, common_config
from hybridsim.wire.channels.base import StepMessage
from hybridsim.wire.contract import Command, Description, Dof, ModuleError, Session
from hybridsim.wire.protocols.openfresco.client import COMMITS, SERVERS, SimAppClient


class OpenFrescoModule(ProtocolClientModule):
    """Each step: setTrialResponse, then the measured displacement and force; the commit as commitState."""

    kind = "openfresco"
    CONFIG = Schema("openfresco", "A client of OpenFresco's SimApp protocol: the lab's server moves its actuators "
                    "(docs/interop.md).", {
                        **COMMON,
                        "server": Key(Text(SERVERS), "the kind of SimApp server", required=True),
                        "data_size": Key(Integer(1), "SimApp's dataSize (numbers per message)", default=256),
                        "tag": Key(Integer(1), "the experimental element's tag", default=1),
                        "path_independent": Key(Flag(), "the server's substructure is elastic: a checkpoint restores "
                                                        "it by imposing its committed displacement again",
                                                default=False),
                    })
    RESTORE_TOLERANCE = 1e-6
    """the restored force may differ from the checkpointed one by this fraction of its largest component"""

    def __init__(self, dofs: tuple[Dof, ...], client: SimAppClient, path_independent: bool = False) -> None:
        super().__init__(dofs, client)
        self.client: SimAppClient = client
        self.reverts = client.server in COMMITS
        self.path_independent = path_independent
        self._committed: tuple[Command, np.ndarray] | None = None
        """the committed step's command and measured force (N, N*m): what a checkpoint holds"""
        self._trial_command: Command | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "OpenFrescoModule":
        address, dofs, deadline = common_config(config, cls.kind,
                                                COMMON_KEYS | {"server", "data_size", "tag", "path_independent"})
        server = config.get("server")
        if server not in SERVERS:
            raise ModuleError(f"openfresco module: server must be one of {', '.join(SERVERS)}, not {server!r}")
        numbers = {}
        for key, default in (("data_size", 256), ("tag", 1)):
            value = config.get(key, default)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ModuleError(f"openfresco module: {key} must be a positive integer")
            numbers[key] = value
        path_independent = config.get("path_independent", False)
        if not isinstance(path_independent, bool):
            raise ModuleError("openfresco module: path_independent must be true or false")
        return cls(dofs, SimAppClient(address, len(dofs), server, deadline, **numbers), path_independent)

    @classmethod
    def checkpoint_refusal(cls, config: Mapping[str, Any]) -> str | None:
        if config.get("path_independent") is True:
            return None
        return ("the SimApp protocol cannot ask its server to save or load a state, and restoring a path-dependent "
                "substructure needs its whole path replayed; for an elastic one declare path_independent = true "
                "(its committed displacement is imposed again), else set output.checkpoint_every = 0")

    def describe(self) -> Description:
        description = super().describe()
        return Description(description.kind, description.dofs, can_checkpoint=self.path_independent,
                           info={**description.info, "server": self.client.server})

    def _on_open(self, session: Session) -> None:
        super()._on_open(session)
        self._committed = self._trial_command = None

    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        self._trial_command = command
        return super()._trial(step, command)

    def _accept(self, step: int) -> None:
        super()._accept(step)
        assert self._executed is not None and self._trial_command is not None
        self._committed = (self._trial_command, self._executed.force)

    def _save_state(self) -> object:
        if self._committed is None:
            return None
        command, force = self._committed
        vector = (lambda v: None if v is None else np.asarray(v, float).tolist())
        return {"time": command.time, "displacement": vector(command.displacement), "velocity": vector(command.velocity),
                "acceleration": vector(command.acceleration), "force": vector(force)}

    def _load_state(self, state: object) -> None:
        """Impose the checkpoint's committed command again (a server at rest stays so: state None) and check the
        force the server measures there against the checkpointed one."""
        if state is None:
            return
        if not self.path_independent:
            raise ModuleError(f"{self.kind} module: {self.client.label} serves a substructure not declared "
                              "path_independent; it cannot be restored by imposing a displacement")
        try:
            n = len(self.dofs)
            vectors = {k: None if state[k] is None else np.array(state[k], float)  # type: ignore[index]
                       for k in ("displacement", "velocity", "acceleration", "force")}
            command = Command(float(state["time"]), vectors["displacement"], vectors["velocity"],  # type: ignore[index]
                              vectors["acceleration"])
            saved = vectors["force"]
            if command.displacement is None or saved is None or command.displacement.shape != (n,) or saved.shape != (n,):
                raise ValueError(f"displacement and force must hold {n} numbers")
        except (KeyError, TypeError, ValueError) as exc:
            raise ModuleError(f"{self.kind} module: not an openfresco checkpoint: {exc}") from None
        result = self._exchange("restore", StepMessage("", -1, None, command, True))
        assert result is not None
        self._exchange("restore", StepMessage("", -1, -1, None, False))
        scale = float(np.max(np.abs(saved)))
        if np.max(np.abs(result.force - saved)) > self.RESTORE_TOLERANCE * scale:
            raise ModuleError(f"{self.kind} module: {self.client.label} measures {result.force.tolist()} at the "
                              f"checkpoint's committed displacement, the checkpoint holds {saved.tolist()}: not the "
                              "same elastic substructure (another model, or one that kept a path)")
        self._committed = (command, saved)
