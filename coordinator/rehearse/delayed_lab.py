"""A virtual lab's actuators with an added transport delay: the knob of a rehearsal's delay margin.

The command held over sample k reaches the actuators' dynamics at sample k + d (d whole samples, zeros before
the first command), on top of whatever delay the plant has of its own: the plant's transfer G(z) becomes
z^-d G(z), the added phase lag w d dt a loop's delay margin is measured in (e.g. Horiuchi et al. 1999, EESD
28(10)).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from hybridsim.modules.plant.actuators import Actuators


class DelayedActuators:
    """``inner`` actuators (hybridsim.modules.plant.actuators.Actuators) driven ``samples`` samples late."""

    def __init__(self, inner: Actuators, samples: int, channels: int) -> None:
        if samples < 0:
            raise ValueError(f"an added delay is 0 or more samples, not {samples}")
        self.inner = inner
        self._channels = channels
        self._queue: deque[np.ndarray] = deque(np.zeros(channels) for _ in range(samples))

    def position(self) -> np.ndarray:
        return self.inner.position()

    def advance(self, command: np.ndarray) -> None:
        self._queue.append(np.asarray(command, float))
        self.inner.advance(self._queue.popleft())

    def state(self) -> list[float]:
        """The inner actuators' state, then the commands in flight (oldest first)."""
        return [*self.inner.state(), *np.concatenate([*self._queue, np.zeros(0)]).tolist()]

    def set_state(self, state: list[float]) -> None:
        flight = len(self._queue) * self._channels
        self.inner.set_state(state[:len(state) - flight])
        self._queue = deque(np.asarray(state[len(state) - flight:], float).reshape(len(self._queue), self._channels))
