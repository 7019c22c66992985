"""Command generation of a multi-rate site: the targets of the m control samples of one coordinator step.

The coordinator integrates at Dt = m dt and sends one target per step, d_{n+1} for t_{n+1}; the
actuator loop runs at dt and needs a target every control sample.  Time inside the step is
tau = (t - t_n) / Dt, sample j = 1..m at tau_j = j / m; l_k(tau) below are the Lagrange basis
polynomials of the nodes named.  Every scheme is a fixed m x (p + 2) matrix W on the target
history, built once per session:

    [c_1 .. c_m] = W [d_{n+1}, d_n, d_{n-1}, .., d_{n-p}]

``interpolate`` (p = 0): c_j = (1 - tau_j) d_n + tau_j d_{n+1}.  It needs d_{n+1} at t_n:
exact in simulated time, where the coordinator's computation takes none; on the wall clock the
actuators would hold while it computes, or run one step behind (d_{n-1} -> d_n over
[t_n, t_{n+1}]), a delay of Dt.

``predictor-corrector`` (order p = 1..3, ``arrival`` x in [0, 1)): OpenFresco's three-loop scheme
(Schellenberg et al., PEER 2009/104), its predictP_p predictor and correctD_p corrector.  The new
target reaches the site after a = floor(x m) samples of the step; until then (j <= a) the
commands are extrapolated from the last p + 1 targets, the nodes tau = 0, -1, .., -p,

    c_j = sum_{i=0..p} l_i(tau_j) d_{n-i},

and from then on (j > a) they are corrected towards d_{n+1} along the polynomial through
(1, d_{n+1}), (a/m, c_a), (0, d_n), (-1, d_{n-1}), .. (the first p + 1 distinct nodes): it starts
at the last command sent (no jump) and reaches d_{n+1} at t_{n+1}, so the actuators never stop.
Targets that are polynomials of degree <= p are followed exactly once p + 1 of them are known.
With m = 1 (a = 0, tau = 1) both schemes send d_{n+1}: lockstep.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Either, Integer, Key, Number, Schema, Table, Text

SCHEMES = ("interpolate", "predictor-corrector")
ORDERS = (1, 2, 3)
CONFIG = Either((Text(("interpolate",)), Table(Schema(
    "command generation", "How the site makes the targets of the m control samples of a step.", {
        "scheme": Key(Text(SCHEMES), "interpolate, or OpenFresco's polynomial predictor-corrector", required=True),
        "order": Key(Integer(1, 3), "predictor-corrector order", default=2),
        "arrival": Key(Number("", 0, 1, open_maximum=True), "fraction of the step after which the new target "
                       "reaches the site (predictor-corrector)"),
    }))))


def lagrange_basis(nodes: Sequence[float], tau: float) -> np.ndarray:
    """l_k(tau) for the nodes, k = 0..len(nodes) - 1."""
    basis = np.ones(len(nodes))
    for k, node in enumerate(nodes):
        for i, other in enumerate(nodes):
            if i != k:
                basis[k] *= (tau - other) / (node - other)
    return basis


def predicted(tau: float, history: np.ndarray, order: int) -> np.ndarray:
    """predictP_p at step time ``tau``: the polynomial through d_n, d_{n-1}, .., d_{n-p} (``history`` rows) at
    the nodes 0, -1, .., -p, extrapolated (the command while the new target has not arrived)."""
    return lagrange_basis([-float(i) for i in range(order + 1)], tau) @ history[: order + 1]


def corrected(tau: float, target: np.ndarray, switch: float, last: np.ndarray, history: np.ndarray,
              order: int) -> np.ndarray:
    """correctD_p at step time ``tau``: the polynomial through (1, d_{n+1}), (``switch``, ``last``: the last
    command sent before d_{n+1} arrived) and (0, d_n), (-1, d_{n-1}), .. (the first p + 1 distinct nodes).
    It starts at ``last`` (no jump) and reaches d_{n+1} at tau = 1."""
    nodes = [1.0, switch, *(-float(i) for i in range(order + 1) if -float(i) != switch)][: order + 1]
    values = [target, last, *(history[round(-node)] for node in nodes[2:])]
    return lagrange_basis(nodes, tau) @ np.vstack(values)


class CommandGenerator:
    """One scheme's weights for ``samples`` control samples per step; :meth:`commands` applies them.

    ``order`` and ``arrival`` are those of the predictor-corrector (unused by ``interpolate``).
    """

    def __init__(self, scheme: str = "interpolate", samples: int = 1, order: int = 2,
                 arrival: float | None = None) -> None:
        if scheme not in SCHEMES:
            raise ValueError(f"command_generation: scheme must be one of {', '.join(SCHEMES)}, not {scheme!r}")
        if samples < 1:
            raise ValueError(f"command_generation: a step needs at least one control sample, not {samples}")
        self.scheme = scheme
        self.samples = samples
        if scheme == "interpolate":
            self.order = 0
            self.weights = np.array([[tau, 1.0 - tau] for tau in self._taus()])
            return
        if order not in ORDERS:
            raise ValueError(f"command_generation: the predictor-corrector order must be one of {ORDERS}, not {order}")
        if arrival is None or not 0.0 <= arrival < 1.0:
            raise ValueError("command_generation: the predictor-corrector needs arrival, the fraction of the step "
                             f"(0 <= x < 1) after which the coordinator's new target reaches the site, not {arrival}")
        self.order = order
        self.arrival = float(arrival)
        self.predicted = math.floor(self.arrival * samples + 1e-9)
        """a: samples of each step sent before the new target is known"""
        self.weights = self._predictor_corrector()

    @classmethod
    def from_config(cls, value: str | Mapping[str, Any], samples: int) -> CommandGenerator:
        """``"interpolate"`` or ``{scheme = "predictor-corrector", order = 2, arrival = 0.3}``."""
        CONFIG.check(value, "command_generation")
        if isinstance(value, str):
            return cls(value, samples)
        arrival = value.get("arrival")
        return cls(str(value["scheme"]), samples, int(value.get("order", 2)),
                   None if arrival is None else float(arrival))

    @property
    def history(self) -> int:
        """Committed targets the scheme reads: d_n .. d_{n-p}."""
        return self.weights.shape[1] - 1

    def commands(self, new_target: np.ndarray, history: np.ndarray) -> np.ndarray:
        """The m control-sample targets (m x DOFs) from d_{n+1} and ``history`` = [d_n, d_{n-1}, ..] (rows)."""
        return self.weights @ np.vstack((new_target, history[: self.history]))

    def _taus(self) -> list[float]:
        return [j / self.samples for j in range(1, self.samples + 1)]

    def _predictor_corrector(self) -> np.ndarray:
        p, a = self.order, self.predicted
        past = [-float(i) for i in range(p + 1)]
        weights = np.zeros((self.samples, p + 2))
        for j, tau in enumerate(self._taus(), start=1):
            if j <= a:  # predictP_p: the new target is not known yet
                weights[j - 1, 1:] = lagrange_basis(past, tau)
                continue
            switch = a / self.samples
            nodes = [1.0, switch, *(t for t in past if t != switch)][: p + 1]
            basis = lagrange_basis(nodes, tau)
            weights[j - 1, 0] = basis[0]
            last = weights[a - 1] if a > 0 else np.eye(p + 2)[1]  # c_a in terms of the history (a = 0: d_n)
            weights[j - 1] += basis[1] * last
            for node, value in zip(nodes[2:], basis[2:]):
                weights[j - 1, 1 + round(-node)] += value
        return weights
