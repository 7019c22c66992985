"""A lab whose actuators never move: the control of the throwaway site that primes a site's kernels
(:func:`hybridsim.modules.experimental.site.prime_site`); not registered (no lab uses it)."""

from __future__ import annotations

import numpy as np


class AtRest:
    """Strokes and loads stay zero."""

    def __init__(self, channels: int = 2, cells: int | None = None) -> None:
        self._strokes = np.zeros(channels)
        self._loads = np.zeros(channels if cells is None else cells)

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        return self._strokes.copy(), self._loads.copy()

    def command(self, command: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._strokes.copy(), self._loads.copy()

    def commit(self) -> None:
        """Nothing moved."""

    def state(self) -> None:
        return None

    def set_state(self, state: None) -> None:
        """Nothing to restore."""

    def close(self) -> dict[str, float]:
        return {}
