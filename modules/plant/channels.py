"""Per-actuator dynamics of a virtual lab: each actuator its own discrete system, sampled exactly at dt.

Each kind below becomes one discrete state space (Phi, Gamma, C, D) of one
actuator under a zero-order hold: the command u_k held over sample k moves the
state to x_{k+1} = Phi x_k + Gamma u_k, and the position read at sample k+1 is
C x_{k+1} + D u_k.  Kinds (``actuators = [{model = ...}, ...]``, one table per actuator):

``ideal``              the command of sample k is reached at k + 1 (the loop's one-sample delay)
``delay``              ``samples`` = d >= 1: the command of sample k is reached at k + d
``first-order``        ``bandwidth`` a (rad/s): a / (s + a), exact: alpha = exp(-a dt)
``transfer-function``  ``num``, ``den`` (continuous, highest power first; proper), discretised by ZOH
``state-space``        ``a``, ``b``, ``c``, optional ``d`` (continuous, single input and output), by ZOH

The identified multi-input plant of the maRTHS benchmark stays the lab's ``actuators =
{model = "state-space", a, b, c}`` table (one MIMO system sampled by RK4 as the benchmark does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

Discrete = tuple[np.ndarray, np.ndarray, np.ndarray, float]


def _ideal(table: Mapping[str, Any], dt: float) -> Discrete:
    return np.zeros((1, 1)), np.ones((1, 1)), np.ones((1, 1)), 0.0


def _delay(table: Mapping[str, Any], dt: float) -> Discrete:
    d = table.get("samples")
    if not isinstance(d, int) or isinstance(d, bool) or d < 1:
        raise ValueError(f"a 'delay' actuator needs samples, a whole number >= 1, not {d!r}")
    shift = np.eye(d, k=-1)  # x_1 = u_{k-1}, x_i = u_{k-i}
    gamma = np.zeros((d, 1))
    gamma[0, 0] = 1.0
    output = np.zeros((1, d))
    output[0, d - 1] = 1.0
    return shift, gamma, output, 0.0


def _first_order(table: Mapping[str, Any], dt: float) -> Discrete:
    a = float(table.get("bandwidth", math.nan))
    if not (a > 0 and math.isfinite(a)):
        raise ValueError(f"a 'first-order' actuator needs bandwidth a > 0 (rad/s), not {table.get('bandwidth')!r}")
    alpha = math.exp(-a * dt)
    return np.array([[alpha]]), np.array([[1.0 - alpha]]), np.ones((1, 1)), 0.0


def _continuous(system: tuple[np.ndarray, ...], dt: float) -> Discrete:
    import scipy.signal  # slow to import: only for the kinds that need it

    phi, gamma, c, d, _ = scipy.signal.cont2discrete(system, dt, method="zoh")
    return phi, gamma, c, float(np.asarray(d).ravel()[0]) if np.size(d) else 0.0


def _transfer_function(table: Mapping[str, Any], dt: float) -> Discrete:
    try:
        num, den = np.atleast_1d(np.asarray(table["num"], float)), np.atleast_1d(np.asarray(table["den"], float))
    except KeyError as exc:
        raise ValueError(f"a 'transfer-function' actuator needs {exc.args[0]!r} (continuous, highest power first)") from None
    if num.size > den.size or den[0] == 0:
        raise ValueError("a 'transfer-function' actuator must be proper: len(num) <= len(den), den[0] != 0")
    import scipy.signal

    return _continuous(scipy.signal.tf2ss(num, den), dt)


def _state_space(table: Mapping[str, Any], dt: float) -> Discrete:
    try:
        a, b, c = (np.atleast_2d(np.asarray(table[k], float)) for k in ("a", "b", "c"))
    except KeyError as exc:
        raise ValueError(f"a 'state-space' actuator needs {exc.args[0]!r}") from None
    d = np.atleast_2d(np.asarray(table.get("d", 0.0), float))
    n = a.shape[0]
    if a.shape != (n, n) or b.shape != (n, 1) or c.shape != (1, n) or d.shape != (1, 1):
        raise ValueError(f"a 'state-space' actuator has one input and one output: a n x n, b n x 1, c 1 x n; "
                         f"got {a.shape}, {b.shape}, {c.shape}")
    return _continuous((a, b, c, d), dt)


MODELS: dict[str, Callable[[Mapping[str, Any], float], Discrete]] = {
    "ideal": _ideal,
    "delay": _delay,
    "first-order": _first_order,
    "transfer-function": _transfer_function,
    "state-space": _state_space,
}


class ChannelActuators:
    """Independent actuators, each a discrete system of :data:`MODELS` (the ``Actuators`` protocol)."""

    def __init__(self, tables: Sequence[Mapping[str, Any]], sample_period: float) -> None:
        systems = []
        for i, table in enumerate(tables, start=1):
            model = table.get("model") if isinstance(table, Mapping) else None
            if model not in MODELS:
                raise ValueError(f"actuator {i}: model must be one of {', '.join(MODELS)}, not {model!r}")
            try:
                systems.append(MODELS[model](table, sample_period))
            except ValueError as exc:
                raise ValueError(f"actuator {i}: {exc}") from None
        self.systems = systems
        self._states = [np.zeros(phi.shape[0]) for phi, _, _, _ in systems]
        self._held = np.zeros(len(systems))

    def position(self) -> np.ndarray:
        return np.array([float(c[0] @ x) + d * u for (_, _, c, d), x, u in zip(self.systems, self._states, self._held)])

    def advance(self, command: np.ndarray) -> None:
        self._held = np.array(command, float)
        self._states = [phi @ x + gamma[:, 0] * u for (phi, gamma, _, _), x, u in
                        zip(self.systems, self._states, self._held)]

    def state(self) -> list[list[float]]:
        return [x.tolist() for x in self._states] + [self._held.tolist()]

    def set_state(self, state: list[list[float]]) -> None:
        self._states = [np.array(x, float) for x in state[:-1]]
        self._held = np.array(state[-1], float)
