"""Controls: where an experimental site's commands go (OpenFresco's ``experimentalControl/`` family).

A control is one small class (one file, one line in :data:`CONTROLS`) with OpenFresco's four verbs:

- ``open(table, context)`` (a classmethod): connect to the lab (or build it) from the site's
  ``backend`` table, whose key named as the control holds its own entry (``backend = {plant = {...}}``,
  ``{address = "HOST:PORT"}``, ``{generic_tcp = "HOST:PORT", channels = 2}``);
- ``command(strokes)``: hold one stroke per actuator (m) over one control sample and return what was
  measured at its end: the strokes (m) and the load cells (N, pushing positive; zeros without any);
- ``read()``: the same measurement now, before any command;
- ``close()``: let go of the lab, returning its figures (``max_command_volts_1``, ..).

``commit``, ``state`` and ``set_state`` serve the site's trials (a step taken back); a control whose actuators go
back with a state (``REWINDS``: a virtual lab, a plant daemon) says where they are then with ``reading()`` (the
strokes, m; nothing moves or steps), the gate's reference after a restore; ``probe`` (optional)
answers a pre-test at the strokes of a pose without moving anything.  Each class declares ``KEY``, the
:class:`~hybridsim.modules.config_schema.Key` of its entry; :data:`BACKEND` (the ``backend`` table) is made
of them and the keys the controls share.  A control may refuse to be taken back to a checkpoint
(``CHECKPOINT_REFUSAL``, a sentence) or say it cannot answer a pre-test (``PROBES`` False: the site needs
``initial_stiffness``); ``check(table, sample_period)`` (optional) refuses what spans its table's keys, and
``channels(table)`` (optional) says how many actuators the table gives the lab (``CHANNELS_KEY``: where).
A control not in this folder is one file and one line added to :data:`CONTROLS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hybridsim.modules.config_schema import Integer, Key, Number, Schema, Table, Text
from hybridsim.modules.network import NETWORK, TRANSPORT
from hybridsim.registry import resolve
from hybridsim.modules.experimental.controls.base import Control, OpenContext
from hybridsim.wire.contract import ModuleError

__all__ = ["CONTROLS", "BACKEND", "Control", "OpenContext", "backend_schema", "check_control", "named",
           "open_control"]

CONTROLS: dict[str, str] = {
    "plant": "hybridsim.modules.experimental.controls.plant:InProcessLab",
    "address": "hybridsim.modules.experimental.controls.daemon:PlantDaemon",
    "daemon": "hybridsim.modules.experimental.controls.daemon:LocalPlantDaemon",
    "generic_tcp": "hybridsim.modules.experimental.controls.generic_tcp:GenericTcp",
}
"""backend table key -> the control class (``hybridsim.registry``)"""


SHARED = {
    "channels": Key(Integer(1), "actuators of the generic TCP controller", default=2),
    "name": Key(Text(), "the plant's name in messages", default="plant"),
    "deadline_s": Key(Number("s", 0, open_minimum=True), "deadline of each call to a plant daemon", default=10.0),
    "transport": TRANSPORT,
    "network": Key(Table(NETWORK), "an emulated network path between the site and its plant daemon (address or "
                   "daemon), as a module's in an experiment (docs/realtime.md)"),
}
"""the backend table's keys that are no control's own"""


def control_class(name: str) -> Any:
    """The class registered as ``name``."""
    return resolve(CONTROLS[name])


def backend_schema() -> Schema:
    """The ``backend`` table as the registry stands now: one key per control, exactly one of them given."""
    return Schema("backend", "Where the control samples go: a plant in this process, a plant daemon, a plant "
                  "config the site starts as a local daemon, or a lab's controller over OpenFresco's generic TCP.",
                  {**{name: control_class(name).KEY for name in CONTROLS}, **SHARED},
                  exactly_one=(tuple(CONTROLS),),
                  renamed={"link": "backend.transport (link = 'tcp' is transport = 'link', 'grpc' is 'stream', "
                                   "'auto' stays 'auto')"})


@dataclass(frozen=True)
class BackendTable(Table):
    """The ``backend`` key's type: checked against the controls registered when it is checked (a control
    added by one registry line is a key at once), documented as the shipped ones."""

    def check(self, value: Any, path: str) -> None:
        Table(backend_schema()).check(value, path)


BACKEND = BackendTable(backend_schema())


def named(table: Any) -> Any:
    """The control class a backend table names (None: not exactly one)."""
    names = [name for name in CONTROLS if name in table] if isinstance(table, Mapping) else []
    return control_class(names[0]) if len(names) == 1 else None


def check_control(table: Mapping[str, Any], sample_period: float, actuators: int) -> None:
    """What a validated backend table's control checks across its keys (``check``, if it has one), and that it
    drives the site's ``actuators`` (``channels(table)``, where the table says how many it has)."""
    control = named(table)
    check = getattr(control, "check", None)
    if check is not None:
        check(table, sample_period)
    channels = getattr(control, "channels", None)
    count = None if channels is None else channels(table)
    if count is not None and count != actuators:
        raise ModuleError(f"experimental module: the setup has {actuators} actuator{'s' if actuators != 1 else ''}, "
                          f"the backend's lab {count} ({control.CHANNELS_KEY}): give the lab one channel per "
                          "actuator of the setup")


def open_control(table: Mapping[str, Any], context: OpenContext) -> Control:
    """The control of a validated ``backend`` table, opened."""
    control: Control = named(table).open(table, context)
    return control
