"""The ``generic_tcp`` control: a lab's own controller over OpenFresco's generic TCP protocol (ECGenericTCP;
``hybridsim site plant --generic-tcp`` serves one; docs/interop.md), ``backend = {generic_tcp = "HOST:PORT",
channels = 2, deadline_s = 10.0}``: one ``3`` (command) then ``6`` (response) per control sample."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Key, Text
from hybridsim.wire.contract import Session

from hybridsim.modules.experimental.controls.base import OpenContext
from hybridsim.modules.experimental.controls.plant import refuse_remote_keys
from hybridsim.modules.experimental.controls.stepped import SteppedModule


class GenericTcp(SteppedModule):
    """The lab's controller, one step of its protocol client per control sample."""

    KEY = Key(Text(), "HOST:PORT of a lab's controller (ECGenericTCP; docs/interop.md)")
    PROBES = False
    CHECKPOINT_REFUSAL = ("its backend is a lab's controller over OpenFresco's generic TCP protocol "
                          "(backend.generic_tcp), which keeps no checkpoints; set output.checkpoint_every = 0")

    CHANNELS_KEY = "backend.channels"

    @classmethod
    def channels(cls, table: Mapping[str, Any]) -> int:
        """The controller's actuators: ``channels``."""
        return int(table.get("channels", 2))

    @classmethod
    def check(cls, table: Mapping[str, Any], sample_period: float) -> None:
        """A lab's controller has no transport or emulated network of the site's."""
        refuse_remote_keys(table)

    @classmethod
    def open(cls, table: Mapping[str, Any], context: OpenContext) -> GenericTcp:
        from hybridsim.modules.registry import build_module

        channels = int(table.get("channels", 2))
        names = [f"actuator_{i + 1}" for i in range(channels)]
        controller = build_module("openfresco", {"address": table["generic_tcp"], "dofs": names,
                                                 "server": "generic-tcp",
                                                 "deadline_s": float(table.get("deadline_s", 10.0))})
        controller.open(Session(context.sample_period, tuple(names)))
        control = cls(controller, context.sample_period, channels)
        control.expect_steps(context.samples, context.iterating)
        return control
