"""Compensator kinds by name, for site configurations: ``{"kind": "rls", ...parameters}``.

Each class has ``from_config(table)``; kinds are imported when used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Schema, Variants
from hybridsim.modules.experimental.compensators.base import Compensator
from hybridsim.registry import load

KINDS: dict[str, str] = {
    "none": "hybridsim.modules.experimental.compensators.none:NoCompensation",
    "rls": "hybridsim.modules.experimental.compensators.rls:RlsCompensator",
    "inverse": "hybridsim.modules.experimental.compensators.inverse:InverseCompensation",
    "polynomial": "hybridsim.modules.experimental.compensators.polynomial:PolynomialExtrapolation",
    "narx": "hybridsim.modules.experimental.compensators.narx:NarxCompensator",
}
CONFIG = Schema("compensator", "One actuator's delay compensation: `kind` and that kind's parameters.",
                variants=Variants("kind", KINDS, doc="the compensation scheme"))


def build_compensator(table: Mapping[str, Any], path: str = "compensator") -> Compensator:
    """A compensator from its table: ``kind`` plus that kind's parameters (``path``: where, for messages)."""
    CONFIG.check(table, path)
    kind = table["kind"]
    return load(KINDS, kind).from_config({k: v for k, v in table.items() if k != "kind"})
