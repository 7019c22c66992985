"""Displacement-sensor noise: seeded white noise, one sample per control tick (maRTHS §9, §15).

Convention (so that two implementations match sample by sample):
n = sigma * numpy.random.default_rng(seed).standard_normal(N), sample n[k]
added at tick k.  With ``shared=True`` every channel carries that same
sequence (the benchmark gives both noise blocks one seed); otherwise channel
i draws from its own stream ``default_rng(SeedSequence(seed).spawn(channels)[i])``.
The streams are drawn in blocks as the ticks advance; a block-wise draw
gives the same numbers as one draw of the whole length.  A sensor keeps the
last few blocks and the generators' state at the start of every block, so a
long test holds a few hundred bytes per 4096 ticks instead of every sample.
"""

from __future__ import annotations

import math

import numpy as np

from hybridsim.modules.kernels import kernel

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
        self._starts: list[list[dict]] = []
        """the generators' states at the start of every block drawn so far (a few hundred bytes each)"""
        self._frontier = [g.bit_generator.state for g in self._generators]
        """the generators' states after the last block drawn (where the next block starts)"""
        self._blocks: dict[int, np.ndarray] = {}
        """the last few blocks drawn or redrawn (BLOCK x channels, read-only), by block index"""

    def sequence(self, ticks: int) -> np.ndarray:
        """The noise of ticks 0 .. ``ticks`` - 1 (ticks x channels)."""
        if self.sigma == 0.0:
            return np.zeros((ticks, self.channels))
        blocks = [self._block(b) for b in range(-(-ticks // BLOCK))]
        return np.vstack(blocks)[:ticks] if blocks else np.zeros((0, self.channels))

    def sample(self, tick: int) -> np.ndarray:
        """The noise of every channel at ``tick`` (0-based); a read-only view."""
        if self.sigma == 0.0:
            return np.zeros(self.channels)
        return self._block(tick // BLOCK)[tick % BLOCK]

    def _block(self, index: int) -> np.ndarray:
        """Block ``index``: kept, redrawn from its saved start, or drawn after the last one.

        Memory stays bounded: only the last ``KEPT_BLOCKS`` blocks are held; an earlier tick (a lab
        set back to a checkpoint) redraws its block from the generators' state saved for it.
        """
        block = self._blocks.get(index)
        if block is not None:
            return block
        if index < len(self._starts):  # an earlier block: redraw it from its saved start
            self._set_generators(self._starts[index])
            drawn = [g.standard_normal(BLOCK) for g in self._generators]
        else:  # draw forward from the frontier, saving each block's start
            self._set_generators(self._frontier)
            while len(self._starts) <= index:
                self._starts.append([g.bit_generator.state for g in self._generators])
                drawn = [g.standard_normal(BLOCK) for g in self._generators]
            self._frontier = [g.bit_generator.state for g in self._generators]
        block = np.column_stack(drawn)
        if self.shared:
            block = np.repeat(block, self.channels, axis=1)
        block = self.sigma * block
        block.setflags(write=False)
        self._blocks[index] = block
        for old in sorted(self._blocks)[:-KEPT_BLOCKS]:
            del self._blocks[old]
        return block


    def _set_generators(self, states: list[dict]) -> None:
        for g, state in zip(self._generators, states):
            g.bit_generator.state = state


KEPT_BLOCKS = 3
"""blocks of noise a sensor keeps drawn (the current one and its neighbours)"""


class Sensor:
    """A sensor on ``channels`` signals: the true value plus :class:`SensorNoise` and ``drift`` per tick, then
    quantized to ``quantum`` and saturated at +-``limit`` (sensor units; None: not quantized, not saturated)."""

    def __init__(self, noise: SensorNoise, quantum: float | None = None, limit: float | None = None,
                 drift: float = 0.0) -> None:
        for name, value in (("quantum", quantum), ("limit", limit)):
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ValueError(f"sensor {name} must be a positive number, not {value}")
        self.noise = noise
        self.quantum = quantum
        self.limit = limit
        self.drift = drift

    def read(self, true: np.ndarray, tick: int) -> np.ndarray:
        """What the sensor shows at ``tick`` for the ``true`` values (:func:`sensed`)."""
        return sensed(np.asarray(true, float), self.noise.sample(tick), self.drift, tick, self.quantum or 0.0,
                      math.inf if self.limit is None else self.limit)


@kernel
def sensed(true: np.ndarray, noise: np.ndarray, drift: float, tick: int, quantum: float, limit: float) -> np.ndarray:
    """true + noise + drift tick, quantized to ``quantum`` (0: not) and saturated at +-``limit`` (inf: not)."""
    value = true + noise
    if drift != 0.0:
        value = value + drift * tick
    if quantum > 0.0:
        value = np.rint(value / quantum) * quantum
    if limit < math.inf:
        value = np.minimum(np.maximum(value, -limit), limit)
    return value
