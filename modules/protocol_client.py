"""What the module kinds that speak a lab's protocol share (``openfresco``, ``simcor``; docs/interop.md).

Such a kind runs in the coordinator's process as the client of a server it does not control: its
configuration names the server (``address``, added from the [[modules]] table), the DOFs (``dofs``,
``kinds``) and how long to wait for each reply (``deadline_s``).  Its server keeps no checkpoints for
hybridsim, and some cannot revert a trial (:attr:`ProtocolClientModule.reverts`): for those, the
pre-test's trials (before the first commit) go through and become committed states, which is exact for
an elastic substructure, and after the first commit a proposal that would discard an executed trial is
refused rather than silently committed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from hybridsim.modules.base import StepLedger
from hybridsim.modules.config_schema import Key, Names, Number, Text
from hybridsim.wire.channels.base import Call, StepMessage
from hybridsim.wire.contract import Command, Description, Dof, ModuleError, Session, StepRefused, StepResult

COMMON_KEYS = frozenset({"address", "dofs", "kinds", "deadline_s"})
COMMON = {
    "address": Key(Text(), "HOST:PORT of the lab's server", required=True),
    "dofs": Key(Names(), "DOF names, in the coordinator's namespace", required=True),
    "kinds": Key(Names(("translation", "rotation")), "kind of each DOF", default="translation"),
    "deadline_s": Key(Number("s", 0, open_minimum=True), "deadline of each exchange with the server", default=10.0),
}
"""the declared keys every protocol kind takes (hybridsim.modules.config_schema)"""


class Client(Protocol):
    """The connection a protocol kind steps through."""

    address: str
    deadline_s: float

    @property
    def label(self) -> str: ...

    def connect(self) -> None: ...

    def close(self) -> None: ...

    def exchange(self, message: StepMessage, call: Call, timeout_s: float) -> StepResult | None: ...


def common_config(config: Mapping[str, Any], kind: str, keys: frozenset[str]) -> tuple[str, tuple[Dof, ...], float]:
    """The address, DOFs and deadline (s) of a protocol kind's config, whose keys must lie in ``keys``."""
    unknown = sorted(set(config) - keys)
    if unknown:
        raise ModuleError(f"{kind} module: unknown key {unknown[0]!r}; allowed: {', '.join(sorted(keys))}")
    address = config.get("address")
    if not isinstance(address, str) or ":" not in address:
        raise ModuleError(f"{kind} module: give the server's address = \"HOST:PORT\"")
    names = config.get("dofs")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ModuleError(f"{kind} module: 'dofs' must be a non-empty list of DOF names")
    kinds = config.get("kinds", ["translation"] * len(names))
    if not isinstance(kinds, list) or len(kinds) != len(names):
        raise ModuleError(f"{kind} module: 'kinds' must have one entry (translation or rotation) per DOF")
    deadline = config.get("deadline_s", 10.0)
    if not isinstance(deadline, (int, float)) or isinstance(deadline, bool) or not deadline > 0:
        raise ModuleError(f"{kind} module: deadline_s must be a positive number of seconds")
    return address, tuple(Dof(n, k) for n, k in zip(names, kinds)), float(deadline)


class ProtocolClientModule(StepLedger):
    """A StepLedger whose steps go through ``client``, a channel of the lab's protocol (its ``exchange``)."""

    kind = ""
    reverts = True
    """whether the server can take a new trial in place of an executed one (else see the module docstring)"""

    def __init__(self, dofs: tuple[Dof, ...], client: Client) -> None:
        super().__init__()
        self.dofs = dofs
        self.client = client

    def describe(self) -> Description:
        return Description(kind=self.kind, dofs=self.dofs, can_checkpoint=False, info={"address": self.client.address})

    def _on_open(self, session: Session) -> None:
        self.client.close()
        self.client.connect()

    def _check(self, step: int, command: Command) -> None:
        pending = self._executed is not None and self._executed.step > self._committed_step
        if pending and not self.reverts and self._committed_step >= 0:
            raise StepRefused(step, f"{self.client.label} cannot revert the trial of step {self._executed.step} "  # type: ignore[union-attr]
                                    "(the server commits every trial): use an integrator with one trial per "
                                    "step (alpha-os, central-difference)")

    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        result = self._exchange("execute", StepMessage("", step, None, command, True))
        assert result is not None
        return result.displacement, result.force

    def _accept(self, step: int) -> None:
        self._exchange("commit", StepMessage("", step, step, None, False))

    def _exchange(self, what: str, message: StepMessage) -> StepResult | None:
        """One step through the client, a channel (hybridsim.wire.channels.base) without a gRPC session."""
        deadline = self.client.deadline_s
        return self.client.exchange(message, Call(self.client.label, what, message.step, deadline), deadline)

    def _discard(self) -> None:
        """The next trial replaces this one at the server (where it cannot, :meth:`_check` refused)."""

    def _load_state(self, state: object) -> None:
        raise ModuleError(f"{self.kind} module: {self.client.label} cannot be restored to a checkpoint")

    def close(self) -> dict[str, float]:
        self.client.close()
        return super().close()
