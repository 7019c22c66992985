"""Compensator kinds by name, for site configurations: ``{"kind": "rls", ...parameters}``.

Each class has ``from_config(table)``; kinds are imported when used.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from hybridsim.modules.experimental.compensators.base import Compensator

KINDS: dict[str, str] = {
    "none": "hybridsim.modules.experimental.compensators.none:NoCompensation",
    "rls": "hybridsim.modules.experimental.compensators.rls:RlsCompensator",
    "inverse": "hybridsim.modules.experimental.compensators.inverse:InverseCompensation",
    "polynomial": "hybridsim.modules.experimental.compensators.polynomial:PolynomialExtrapolation",
    "narx": "hybridsim.modules.experimental.compensators.narx:NarxCompensator",
}


def build_compensator(table: Mapping[str, Any]) -> Compensator:
    """A compensator from its table: ``kind`` plus that kind's parameters."""
    kind = table.get("kind")
    if kind not in KINDS:
        raise ValueError(f"compensator kind must be one of {', '.join(sorted(KINDS))}, not {kind!r}")
    module_name, _, class_name = KINDS[kind].partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls.from_config({k: v for k, v in table.items() if k != "kind"})
