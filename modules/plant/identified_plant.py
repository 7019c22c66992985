"""An identified MIMO control plant in zero-pole-gain form, its uncertain variants and a realisation.

H[i][j](s) = k prod(s - z) / prod(s - p) maps command j to displacement i
(the maRTHS plant is mm -> mm; roots in rad/s).  All channels driven by one
input share their poles (one input column = one servo-hydraulic actuator with
its coupling to the frame), so a minimal realisation has one state per pole
of each column.  Uncertain plants scale chosen roots by (1 + sigma n), n
standard normal, and rescale each gain so the low-frequency magnitude stays
nominal (maRTHS §8.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

LOW_FREQUENCY = 2 * np.pi * 0.01
"""rad/s: where uncertain gains are renormalised to the nominal magnitude"""


@dataclass(frozen=True)
class Zpk:
    """One SISO channel: zeros and poles (rad/s) and gain k."""

    zeros: tuple[complex, ...]
    poles: tuple[complex, ...]
    gain: float

    def response(self, omega: float | np.ndarray) -> complex | np.ndarray:
        """H(j omega)."""
        s = 1j * np.asarray(omega, float)
        num = np.prod([s - z for z in self.zeros], axis=0) if self.zeros else np.ones_like(s)
        den = np.prod([s - p for p in self.poles], axis=0)
        return self.gain * num / den

    def substituted(self, roots: dict[complex, complex]) -> "Zpk":
        """The same channel with every root found in ``roots`` replaced by its value there."""
        return replace(self, zeros=tuple(roots.get(z, z) for z in self.zeros),
                       poles=tuple(roots.get(p, p) for p in self.poles))


@dataclass(frozen=True)
class UncertainRoot:
    """A root scaled by (1 + sigma n) in an uncertain plant; a complex root takes its conjugate along."""

    value: complex
    sigma: float


@dataclass(frozen=True)
class IdentifiedPlant:
    """channels[i][j]: output i, input j."""

    channels: tuple[tuple[Zpk, ...], ...]

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.channels), len(self.channels[0])

    def column(self, j: int) -> tuple[Zpk, ...]:
        return tuple(row[j] for row in self.channels)

    def dc_gain(self) -> np.ndarray:
        return np.array([[float(np.real(h.response(0.0))) for h in row] for row in self.channels])

    def response(self, omega: float) -> np.ndarray:
        """The complex frequency response matrix at ``omega`` (rad/s)."""
        return np.array([[h.response(omega) for h in row] for row in self.channels])

    def perturbed(self, roots: Sequence[UncertainRoot], normals: Sequence[float]) -> "IdentifiedPlant":
        """Scale ``roots[d]`` by (1 + sigma_d normals[d]) wherever it occurs, then renormalise the gains.

        Each uncertain gain is k_nom |H_nom(j w0)| / |H_u(j w0)| with H_u
        built on the nominal gain and w0 = 2 pi 0.01 rad/s.
        """
        if len(normals) != len(roots):
            raise ValueError(f"{len(roots)} uncertain roots need as many normal draws, got {len(normals)}")
        mapping: dict[complex, complex] = {}
        for root, n in zip(roots, normals):
            scaled = complex(root.value) * (1.0 + root.sigma * float(n))
            mapping[complex(root.value)] = scaled
            mapping[complex(root.value).conjugate()] = scaled.conjugate()
        rows = []
        for row in self.channels:
            new_row = []
            for nominal in row:
                shifted = nominal.substituted(mapping)
                ratio = abs(nominal.response(LOW_FREQUENCY)) / abs(shifted.response(LOW_FREQUENCY))
                new_row.append(replace(shifted, gain=nominal.gain * float(ratio)))
            rows.append(tuple(new_row))
        return IdentifiedPlant(tuple(rows))

    def state_space(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(A, B, C) with D = 0: one cascade realisation per input column, block-diagonal."""
        blocks = [_column_realisation(self.column(j)) for j in range(self.shape[1])]
        n = sum(a.shape[0] for a, _ in blocks)
        a_full, b_full, c_full = np.zeros((n, n)), np.zeros((n, len(blocks))), np.zeros((self.shape[0], n))
        start = 0
        for j, (a, c) in enumerate(blocks):
            m = a.shape[0]
            a_full[start:start + m, start:start + m] = a
            b_full[start + m - 1, j] = 1.0
            c_full[:, start:start + m] = c
            start += m
        return a_full, b_full, c_full


def _column_realisation(column: Sequence[Zpk]) -> tuple[np.ndarray, np.ndarray]:
    """(A, C) of one input column: a cascade of real 1st- and 2nd-order sections; B = last unit vector.

    The input drives the last state.  Sections are chained from the input
    end: complex pairs first (modal form [[sigma, w], [-w, sigma]], driven on
    their second state), then real poles, each driven by the first state of
    the section before.  C is found by matching numerators over the common
    denominator, so C (sI - A)^-1 B equals each channel exactly.
    """
    poles = column[0].poles
    if any(h.poles != poles for h in column):
        raise ValueError("every channel of an input column must share its poles")
    pairs = [p for p in poles if p.imag < 0]
    reals = [p.real for p in poles if p.imag == 0]
    if len(pairs) != sum(1 for p in poles if p.imag > 0):
        raise ValueError("complex poles must come in conjugate pairs")
    sections: list[tuple[str, float, float]] = [("pair", p.real, -p.imag) for p in pairs]
    sections += [("real", p, 0.0) for p in reversed(reals)]
    n = len(poles)
    a = np.zeros((n, n))
    # state numerators n_i(s) over the running denominator; states listed from the input end
    numerators: list[np.ndarray] = []
    drive, index = None, n
    denominator = np.array([1.0])
    for kind, sigma, omega in sections:
        if kind == "pair":
            first, second = index - 2, index - 1
            a[first, first] = a[second, second] = sigma
            a[first, second], a[second, first] = omega, -omega
            if drive is not None:
                a[second, drive] = 1.0
            section_den = np.array([1.0, -2 * sigma, sigma**2 + omega**2])
            feed = numerators[-1] if numerators else np.array([1.0])  # numerator of the driving signal
            lift = [np.polymul(num, section_den) for num in numerators]
            numerators = lift + [np.polymul(feed, np.array([1.0, -sigma])), omega * feed]  # second, first state
            drive, index, denominator = first, first, np.polymul(denominator, section_den)
        else:
            state = index - 1
            a[state, state] = sigma
            if drive is not None:
                a[state, drive] = 1.0
            section_den = np.array([1.0, -sigma])
            feed = numerators[-1] if numerators else np.array([1.0])
            lift = [np.polymul(num, section_den) for num in numerators]
            numerators = lift + [feed]
            drive, index, denominator = state, state, np.polymul(denominator, section_den)
    # numerators[i] belongs to state n-1-i (input end first); stack as columns in state order
    basis = np.zeros((n, n))
    for i, num in enumerate(numerators):
        basis[n - len(num):, n - 1 - i] = num
    c = np.zeros((len(column), n))
    for row, h in enumerate(column):
        target = np.real(h.gain * np.poly(h.zeros)) if h.zeros else np.array([h.gain])
        padded = np.zeros(n)
        padded[n - len(target):] = target
        scale = np.max(np.abs(basis), axis=0)
        c[row] = np.linalg.solve(basis / scale, padded) / scale
    return a, c
