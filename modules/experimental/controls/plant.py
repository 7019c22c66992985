"""The ``plant`` control: a virtual lab in the site's process (``backend = {plant = {...}}``), driven directly
every sample (no module interface between the site and it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Key, Table
from hybridsim.modules.plant import module as plant_module
from hybridsim.modules.plant.lab import VirtualLab
from hybridsim.wire.contract import ModuleError

from hybridsim.modules.experimental.controls.base import OpenContext


def same_sample(table: Mapping[str, Any], key: str, sample_period: float) -> None:
    """Refuse a plant config under ``key`` whose control sample is not the site's (s): the site drives its lab one
    sample at a time, so another dt would integrate the actuators' dynamics over the wrong interval."""
    dt = table[key].get("dt")
    if isinstance(dt, (int, float)) and abs(float(dt) - sample_period) > 1e-12 * sample_period:
        raise ModuleError(f"experimental module: backend.{key}.dt ({dt} s) must be the site's dt "
                          f"({sample_period} s): the site drives its lab one control sample at a time")


def plant_table(table: Mapping[str, Any], key: str, context: OpenContext) -> dict[str, Any]:
    """The plant config under ``key`` of a backend table; a specimen in DOF coordinates without a setup table
    takes the site's."""
    plant = dict(table[key])
    specimen = plant.get("specimen")
    if (isinstance(specimen, Mapping) and specimen.get("coordinates", "dofs") == "dofs" and "setup" not in specimen
            and context.setup is not None):
        plant["specimen"] = {**specimen, "setup": context.setup}
    return plant


def plant_channels(plant: Mapping[str, Any]) -> int:
    """The actuators of a plant config (its ``dofs``, two by default: :func:`~hybridsim.modules.plant.module.build_lab`)."""
    return len(plant.get("dofs", ("actuator_1", "actuator_2")))


def refuse_remote_keys(table: Mapping[str, Any]) -> None:
    """A control in this process or over a lab's protocol has no transport or emulated network."""
    for name in ("transport", "network"):
        if name in table:
            raise ModuleError(f"experimental module: backend.{name}: a plant in this process or a lab's generic TCP "
                              f"controller has no {name}; give daemon or address, or drop it")


class InProcessLab:
    """The virtual lab of a plant config as the site's control: :class:`VirtualLab` has the control's verbs
    (and a probe, which answers the pre-test)."""

    KEY = Key(Table(plant_module.CONFIG), "a plant config: the lab in this process")
    PROBES = True
    CHECKPOINT_REFUSAL = None
    CHANNELS_KEY = "backend.plant.dofs"

    @classmethod
    def channels(cls, table: Mapping[str, Any]) -> int:
        """The lab's actuators: its plant config's dofs."""
        return plant_channels(table["plant"])

    @classmethod
    def check(cls, table: Mapping[str, Any], sample_period: float) -> None:
        """What the backend table's declaration cannot say: no transport, the site's control sample."""
        refuse_remote_keys(table)
        same_sample(table, "plant", sample_period)

    @classmethod
    def open(cls, table: Mapping[str, Any], context: OpenContext) -> VirtualLab:
        config = plant_table(table, "plant", context)
        plant_module.prime_lab(config, context.base_dir)
        return plant_module.build_lab(config, context.base_dir)
