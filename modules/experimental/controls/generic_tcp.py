"""The ``generic_tcp`` control: a lab's own controller over OpenFresco's generic TCP protocol (ECGenericTCP;
``hybridsim site plant --generic-tcp`` serves one; docs/interop.md), ``backend = {generic_tcp = "HOST:PORT",
channels = 2, deadline_s = 10.0}``: a command is ``3`` (the strokes) then ``6`` (the response); a reading is
``6`` alone, so reading the actuators never moves them; ``99`` at the end.  A command cannot be taken back: the
actuators stay where it sent them (the gate measures them there)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Key, Text
from hybridsim.wire.protocols.openfresco.client import SimAppClient

from hybridsim.modules.experimental.controls.base import OpenContext
from hybridsim.modules.experimental.controls.plant import refuse_remote_keys


class GenericTcp:
    """The lab's controller, one command and one response per control sample."""

    KEY = Key(Text(), "HOST:PORT of a lab's controller (ECGenericTCP; docs/interop.md)")
    PROBES = False
    REWINDS = False
    CHECKPOINT_REFUSAL = ("its backend is a lab's controller over OpenFresco's generic TCP protocol "
                          "(backend.generic_tcp), which keeps no checkpoints; set output.checkpoint_every = 0")
    CHANNELS_KEY = "backend.channels"

    def __init__(self, client: SimAppClient, sample_period: float) -> None:
        self.client = client
        self.sample_period = sample_period
        self.sample = 0

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
        client = SimAppClient(str(table["generic_tcp"]), cls.channels(table), "generic-tcp",
                              float(table.get("deadline_s", 10.0)))
        client.connect()
        return cls(client, context.sample_period)

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """The controller's response now (``6`` only: nothing moves)."""
        return self.client.measured()

    def command(self, strokes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``3`` with the strokes (m) and the sample's time, then its response."""
        self.sample += 1
        self.client.trial(self.sample * self.sample_period, np.asarray(strokes, float), None, None)
        return self.client.measured()

    def commit(self) -> None:
        """Every command is final at a controller."""

    def state(self) -> dict[str, Any]:
        return {"sample": self.sample}

    def set_state(self, state: dict[str, Any]) -> None:
        """A trial taken back: the next command goes on from where the actuators are (the controller keeps no
        states)."""
        self.sample = int(state["sample"])

    def close(self) -> dict[str, float]:
        """``99``: the controller's session ends; its actuators keep their last command."""
        self.client.close()
        return {}
