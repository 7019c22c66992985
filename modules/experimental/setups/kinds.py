"""Setup kinds by name, for site configurations: ``setup = {kind = "...", ...geometry}``.

Each class has ``from_config(table)``; kinds are imported when used (``hybridsim.registry``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Schema, Variants
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

CONFIG = Schema("setup", "The rig between the site's DOFs and its actuators: `kind` and that kind's geometry "
                "(docs/setups.md).", variants=Variants("kind", KINDS, doc="the rig"))


def build_setup(table: Mapping[str, Any], path: str = "setup") -> Setup:
    """A setup from its table: ``kind`` plus that kind's geometry (``path``: where, for messages)."""
    if not isinstance(table, Mapping):
        raise SetupError(f'{path} must be a table, e.g. {path} = {{kind = "one-actuator"}}')
    CONFIG.check(table, path)
    return load(KINDS, table["kind"]).from_config(table)
