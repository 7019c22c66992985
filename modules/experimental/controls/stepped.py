"""A plant module (a plant daemon) driven one step per control sample: what the ``address`` and ``daemon`` controls
share."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from hybridsim.wire.contract import Command, Module, ModuleError


class SteppedModule:
    """A plant module (in process or a daemon) as the site's control backend, one plant step per control sample.

    Each sample but a step's last is committed at the plant before the next one is sent (its actuators
    have moved); the last one stays a trial at the plant until the site commits the step (the commit
    travels with the next sample's message: no call of its own).  A trial step of one sample is
    therefore taken back at no cost: the plant's next proposal replaces its trial there, from the
    committed state the plant keeps itself (a plant module's ledger), and nothing crosses the wire but
    the samples.  A trial step of several samples has committed all but its last, so taking it back
    needs the plant's committed state at the step's start: then the backend's state carries the
    plant's checkpoint at the start of step 1 and, once a trial has been taken back (an iterating
    integrator), at the start of every step (one more call to the plant per step, only then), and
    :meth:`set_state` restores it.  A state without it (such a trial taken back for the first time
    after step 1) is refused, so a session with an iterating integrator (``Session.iterating``) keeps
    it at every step from the start (:meth:`expect_steps`).
    """

    REWINDS = True
    """a plant goes back with a state it is given (its actuators are virtual)"""

    def __init__(self, module: Module, sample_period: float, channels: int = 2) -> None:
        self.module = module
        self.sample_period = sample_period
        self.channels = channels
        self.sample = 0
        self._step = -1
        self._pending: int | None = None
        """the plant step of the last sample, a trial at the plant until the site commits its step"""
        self._loads = np.zeros(channels)
        self._strokes = np.zeros(channels)
        """the strokes (m) the plant measured at :attr:`sample`"""
        self._samples = 1
        """control samples per step"""
        self._with_plant = False
        """whether the next state() carries the plant's checkpoint"""
        self._rewound = False

    def expect_steps(self, samples: int, iterating: bool) -> None:
        """Steps of ``samples`` control samples; ``iterating``: trials will be taken back, at any step.  Only a
        step of several samples needs the plant's checkpoint to be taken back (see the class)."""
        self._samples = samples
        self._with_plant = samples > 1
        self._rewound = samples > 1 and iterating

    def _call(self, time: float, command: np.ndarray) -> np.ndarray:
        self._step += 1
        self.module.propose(self._step, Command(time, np.asarray(command, float)))
        result = self.module.execute(self._step)
        self._loads = result.force
        return result.displacement

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """The strokes (m) and load cells (N) at rest: the plant's step 0."""
        self._strokes = self._call(0.0, np.zeros(self.channels))
        self.module.commit(self._step)
        return self._strokes, self._loads.copy()

    def command(self, command: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One plant step: ``command`` (m) held over the next sample; the strokes (m) and load cells (N) then."""
        self.commit()  # the step's previous sample
        self._strokes = self._call((self.sample + 1) * self.sample_period, command)
        self._pending = self._step
        self.sample += 1
        return self._strokes, self._loads.copy()

    def reading(self) -> np.ndarray:
        """The strokes (m) the plant measured at the sample it stands at (after a rewind too), without a step."""
        return self._strokes.copy()

    def commit(self) -> None:
        """Commit the last sample at the plant (the others were committed when the next was sent)."""
        if self._pending is not None:
            self.module.commit(self._pending)
            self._pending = None

    def state(self, with_plant: bool = False) -> dict[str, Any]:
        """The sample reached, and the plant's checkpoint (JSON text) when it may be needed or ``with_plant``."""
        state: dict[str, Any] = {"sample": self.sample, "loads": self._loads.tolist(),
                                 "strokes": self._strokes.tolist()}
        if with_plant or self._with_plant:
            state["plant"] = self.module.checkpoint().decode()
            self._with_plant = self._rewound
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        sample = int(state["sample"])
        if sample == self.sample:
            return
        if "plant" in state:
            self.module.restore(state["plant"].encode())
            self._step = max(self._step, int(json.loads(state["plant"])["last_step"]))  # a fresh backend numbers on
            self._rewound = self._with_plant = self._samples > 1
        elif self._pending is None or sample != self.sample - 1:
            raise ModuleError(f"the plant has moved to sample {self.sample} and cannot go back to sample "
                              f"{sample}: this trial step began before its state was kept (a trial of several "
                              "samples is taken back for the first time after step 1)")
        # else: the plant's committed state is that sample's; its next proposal replaces the trial there
        self._pending = None
        self.sample = sample
        self._loads = np.array(state["loads"], float)
        self._strokes = np.array(state["strokes"], float)

    def close(self) -> dict[str, float]:
        """Close the module's session; the figures the site reports of it: its servo commands (V) and its
        network path (``plant_network_*``)."""
        figures = self.module.close()
        return {**{k: v for k, v in figures.items() if k.startswith("max_command_volts")},
                **{f"plant_{k}": v for k, v in figures.items() if k.startswith("network_")}}
