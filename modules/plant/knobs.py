"""A virtual lab's actuators with an added transport delay and a gain error: a rehearsal's margin knobs.

Per actuator i, ``delay`` tau_i (s) and ``gain`` g_i (the plant's keys ``actuators.delay`` and
``actuators.gain``).  The command u_k held over sample k reaches the actuators' own dynamics tau_i later; tau_i =
(n_i + f_i) dt with n_i whole samples and 0 <= f_i < 1, the command the dynamics see over sample k is the held
commands linearly interpolated at t_k - tau_i,

    u'_k = (1 - f_i) u_{k - n_i} + f_i u_{k - n_i - 1}    (zeros before the first command),

so G(z) becomes z^-n (1 - f + f z^-1) G(z): the added phase lag w tau exactly, its gain |1 - f + f e^-iwdt| =
1 - f (1 - f) (w dt)^2 / 2 + O((w dt)^4) (the interpolation's only error; none for a whole number of samples).
The positions the actuators reach are g_i times the dynamics' output (a plant gain error g - 1; e.g. Horiuchi et
al. 1999, EESD 28(10), for the delay; Chen & Ricles 2008, EESD 37(4), for the gain and delay of a loop).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hybridsim.modules.plant.actuators import Actuators

SNAP = 1e-9
"""a delay within this fraction of a sample of a whole number of samples is that number (tau / dt rounding)"""


def split_delay(delay: float, sample_period: float) -> tuple[int, float]:
    """(n, f): ``delay`` (s) = (n + f) ``sample_period`` with n whole and 0 <= f < 1."""
    samples = delay / sample_period
    if abs(samples - round(samples)) < SNAP:
        return int(round(samples)), 0.0
    return math.floor(samples), samples - math.floor(samples)


class KnobbedActuators:
    """``inner`` actuators (the ``Actuators`` protocol) with per-actuator ``delays`` (s) and ``gains``."""

    def __init__(self, inner: Actuators, delays: Sequence[float], gains: Sequence[float], sample_period: float) -> None:
        for i, (tau, g) in enumerate(zip(delays, gains), start=1):
            if not (isinstance(tau, (int, float)) and tau >= 0 and math.isfinite(tau)):
                raise ValueError(f"actuator {i}: delay is 0 or more seconds, not {tau!r}")
            if not (isinstance(g, (int, float)) and g > 0 and math.isfinite(g)):
                raise ValueError(f"actuator {i}: gain is a positive factor (1: none), not {g!r}")
        self.inner = inner
        split = [split_delay(float(tau), sample_period) for tau in delays]
        self._whole = np.array([n for n, _ in split])
        self._fraction = np.array([f for _, f in split])
        self._gains = np.asarray(gains, float)
        self._channels = np.arange(len(split))
        self._history = np.zeros((int(self._whole.max(initial=0)) + 2, len(split)))
        """the held commands, newest first: row j is u_{k - j} once u_k is pushed"""

    def position(self) -> np.ndarray:
        return self._gains * self.inner.position()

    def advance(self, command: np.ndarray) -> None:
        self._history = np.roll(self._history, 1, axis=0)
        self._history[0] = command
        now = self._history[self._whole, self._channels]
        before = self._history[self._whole + 1, self._channels]
        self.inner.advance((1.0 - self._fraction) * now + self._fraction * before)

    def state(self) -> dict[str, list]:
        """The inner actuators' state and the commands in flight (newest first)."""
        return {"inner": self.inner.state(), "history": self._history.tolist()}

    def set_state(self, state: dict[str, list]) -> None:
        self.inner.set_state(state["inner"])
        self._history = np.array(state["history"], float)
