"""No compensation: the command is the target (maRTHS §11.5)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.experimental.compensators.base import Compensator


class NoCompensation(Compensator):
    name = "none"

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> "NoCompensation":
        if table:
            raise ValueError(f"compensator 'none' takes no parameters, got {', '.join(table)}")
        return cls()

    def command(self, target: float, measured: float) -> float:
        return target

    def state(self) -> dict[str, Any]:
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        """Stateless."""
