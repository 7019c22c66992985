"""No compensation: the command is the target (maRTHS §11.5)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Schema
from hybridsim.modules.experimental.compensators.base import Compensator


class NoCompensation(Compensator):
    name = "none"
    CONFIG = Schema("no compensation", "The command is the target.")

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> "NoCompensation":
        cls.CONFIG.check(table)
        return cls()

    def command(self, target: float, measured: float) -> float:
        return target

    def state(self) -> dict[str, Any]:
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        """Stateless."""
