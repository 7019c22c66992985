"""The largest parameter at which a run stays stable, by bisection (the rehearsal's stability margin).

``stable(p)`` runs the experiment with the parameter ``p`` (an actuator delay in s, a plant gain error) and
says whether it stayed stable; stability is assumed lost once and for good between ``low`` (stable) and
``high`` (unstable).  The interval halves until it is narrower than ``tolerance``, so the margin returned
(the last stable value) is within ``tolerance`` below the true one.
"""

from __future__ import annotations

from collections.abc import Callable

from hybridsim.coordinator.errors import UsageError


def largest_stable(stable: Callable[[float], bool], low: float, high: float, tolerance: float) -> float:
    """The largest ``p`` in [low, high) found stable, to ``tolerance`` (same unit as ``p``).

    ``low`` must be stable and ``high`` unstable: a margin outside the bracket is not a margin.
    """
    if not tolerance > 0 or not high > low:
        raise UsageError(f"bisection: needs low < high and tolerance > 0, got {low}, {high}, {tolerance}")
    if not stable(low):
        raise UsageError(f"bisection: the run is unstable already at {low}: no margin (lower the bracket)")
    if stable(high):
        raise UsageError(f"bisection: the run is still stable at {high}: raise the bracket's upper end")
    while high - low > tolerance:
        middle = 0.5 * (low + high)
        if stable(middle):
            low = middle
        else:
            high = middle
    return low
