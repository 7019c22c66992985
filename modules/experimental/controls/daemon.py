"""The ``address`` and ``daemon`` controls: a plant daemon (``backend = {address = "HOST:PORT"}``) or a plant
config the site starts as a local daemon (``{daemon = {...}}``), reached through the wire's starter table with a
``transport``, ``deadline_s`` and an emulated ``network`` as a module's in an experiment; one plant step per
control sample (:class:`~hybridsim.modules.experimental.controls.stepped.SteppedModule`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Key, Table, Text
from hybridsim.modules.network import network_of
from hybridsim.modules.registry import module_schema
from hybridsim.wire.contract import ModuleError, Record, Session, module_records
from hybridsim.wire.remote import RemoteModule
from hybridsim.wire.starters import LOCAL, Place, start

from hybridsim.modules.experimental.controls.base import OpenContext
from hybridsim.modules.experimental.controls.plant import plant_channels, plant_table, same_sample
from hybridsim.modules.experimental.controls.stepped import SteppedModule


class PlantDaemon(SteppedModule):
    """A running plant daemon at ``address``."""

    KEY = Key(Text(), "HOST:PORT of a running plant daemon")
    PROBES = False
    CHECKPOINT_REFUSAL = None

    @classmethod
    def check(cls, table: Mapping[str, Any], sample_period: float) -> None:
        """A plant config the site starts runs at the site's control sample; an emulated network is consistent."""
        if "daemon" in table:
            same_sample(table, "daemon", sample_period)
        if "network" in table:
            network_of(table["network"], "backend.network")

    @classmethod
    def open(cls, table: Mapping[str, Any], context: OpenContext) -> PlantDaemon:
        key = "daemon" if "daemon" in table else "address"
        place = Place(str(table.get("name", "plant")), "plant", plant_table(table, key, context) if key == "daemon"
                      else {}, context.base_dir, LOCAL if key == "daemon" else str(table["address"]),
                      float(table.get("deadline_s", 10.0)), table.get("transport", "auto"),
                      network=None if "network" not in table else network_of(table["network"], "backend.network"))
        plant, _ = start(place, context.stack, lambda: None)
        assert isinstance(plant, RemoteModule)
        names = plant.describe().dof_names
        if context.actuators is not None and len(names) != context.actuators:
            raise ModuleError(f"experimental module: the setup has {context.actuators} actuators, the plant daemon "
                              f"{place.name} {len(names)} ({', '.join(names)}): give the lab one channel per actuator")
        plant.open(Session(context.sample_period, names, records=context.records))
        control = cls(plant, context.sample_period, len(names))
        control.expect_steps(context.samples, context.iterating)
        return control

    def checkpoint_state(self) -> dict[str, Any]:
        """The state with the plant's committed state (a checkpoint of the site)."""
        return self.state(with_plant=True)

    def records(self, since: int, final: bool) -> list[Record]:
        """The plant's DAQ log."""
        return module_records(self.module, since, final)


class LocalPlantDaemon(PlantDaemon):
    """A plant config the site starts as a local daemon (and stops at close)."""

    KEY = Key(Table(module_schema("plant")), "a plant config the site starts as a local daemon")
    CHANNELS_KEY = "backend.daemon.dofs"

    @classmethod
    def channels(cls, table: Mapping[str, Any]) -> int:
        """The lab's actuators: its plant config's dofs."""
        return plant_channels(table["daemon"])
