"""Setup kinds by name, for site configurations: ``setup = {kind = "...", ...geometry}``.

Each class has ``from_config(table)``; kinds are imported when used (``hybridsim.registry``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.experimental.setups.base import Setup, SetupError
from hybridsim.registry import load

KINDS: dict[str, str] = {
    "none": "hybridsim.modules.experimental.setups.none:NoTransformation",
    "linear": "hybridsim.modules.experimental.setups.linear:LinearSetup",
    "one-actuator": "hybridsim.modules.experimental.setups.one_actuator:OneActuator",
    "two-actuators-2d": "hybridsim.modules.experimental.setups.two_actuators_2d:TwoActuators2d",
    "three-actuators-2d": "hybridsim.modules.experimental.setups.three_actuators_2d:ThreeActuators2d",
    "inverted-v-brace": "hybridsim.modules.experimental.setups.inverted_v_brace:InvertedVBrace2d",
    "four-actuators-3d": "hybridsim.modules.experimental.setups.four_actuators_3d:FourActuators3d",
    "loading-platform": "hybridsim.modules.experimental.setups.loading_platform:LoadingPlatform",
    "marths-coupler": "hybridsim.modules.experimental.setups.marths_coupler:MarthsCoupler",
}


def build_setup(table: Mapping[str, Any]) -> Setup:
    """A setup from its table: ``kind`` plus that kind's geometry."""
    if not isinstance(table, Mapping):
        raise SetupError('setup must be a table, e.g. setup = {kind = "one-actuator"}')
    kind = table.get("kind")
    if kind not in KINDS:
        raise SetupError(f"setup kind must be one of {', '.join(KINDS)}, not {kind!r}")
    return load(KINDS, kind).from_config(table)
