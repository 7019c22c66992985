"""Displacement-sensor noise: seeded white noise, one sample per control tick (maRTHS §9, §15).

Convention (so that two implementations match sample by sample):
n = sigma * numpy.random.default_rng(seed).standard_normal(N), sample n[k]
added at tick k.  With ``shared=True`` every channel carries that same
sequence (the benchmark gives both noise blocks one seed); otherwise channel
i draws from its own stream ``default_rng(SeedSequence(seed).spawn(channels)[i])``.
The streams are drawn in blocks as the ticks advance; a block-wise draw
gives the same numbers as one draw of the whole length.
"""

from __future__ import annotations

import math

import numpy as np

BLOCK = 4096
"""samples drawn at a time"""


def band_limited_sigma(noise_power: float, sample_period: float) -> float:
    """Standard deviation of Simulink's Band-Limited White Noise: sqrt(power / Ts)."""
    return math.sqrt(noise_power / sample_period)


class SensorNoise:
    """Additive noise (sensor units, mm for the benchmark) on ``channels`` sensors, indexed by tick."""

    def __init__(self, sigma: float, seed: int, channels: int = 2, shared: bool = True) -> None:
        if not (sigma >= 0 and math.isfinite(sigma)):
            raise ValueError(f"noise standard deviation must be >= 0, got {sigma}")
        self.sigma = float(sigma)
        self.seed = int(seed)
        self.channels = channels
        self.shared = shared
        if shared:
            self._generators = [np.random.default_rng(self.seed)]
        else:
            self._generators = [np.random.default_rng(s) for s in np.random.SeedSequence(self.seed).spawn(channels)]
        self._drawn = np.zeros((0, channels))
        """ticks x channels drawn so far"""

    def sequence(self, ticks: int) -> np.ndarray:
        """The noise of ticks 0 .. ``ticks`` - 1 (ticks x channels)."""
        if ticks > 0:
            self.sample(ticks - 1)
        if self.sigma == 0.0:
            return np.zeros((ticks, self.channels))
        return self._drawn[:ticks].copy()

    def sample(self, tick: int) -> np.ndarray:
        """The noise of every channel at ``tick`` (0-based); a read-only view."""
        if self.sigma == 0.0:
            return np.zeros(self.channels)
        while tick >= self._drawn.shape[0]:
            block = np.column_stack([g.standard_normal(BLOCK) for g in self._generators])
            if self.shared:
                block = np.repeat(block, self.channels, axis=1)
            self._drawn = np.vstack([self._drawn, self.sigma * block])
            self._drawn.setflags(write=False)
        return self._drawn[tick]


class Sensor:
    """A sensor on ``channels`` signals: the true value plus :class:`SensorNoise`, then quantized to ``quantum``
    and saturated at +-``limit`` (sensor units; None: not quantized, not saturated)."""

    def __init__(self, noise: SensorNoise, quantum: float | None = None, limit: float | None = None) -> None:
        for name, value in (("quantum", quantum), ("limit", limit)):
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ValueError(f"sensor {name} must be a positive number, not {value}")
        self.noise = noise
        self.quantum = quantum
        self.limit = limit

    def read(self, true: np.ndarray, tick: int) -> np.ndarray:
        """What the sensor shows at ``tick`` for the ``true`` values."""
        value = true + self.noise.sample(tick)
        if self.quantum is not None:
            value = np.round(value / self.quantum) * self.quantum
        if self.limit is not None:
            value = np.clip(value, -self.limit, self.limit)
        return value
