"""Actuator dynamics sampled at the control rate: a linear plant under held commands, or an ideal one.

Both follow one convention: ``position()`` is the displacement at the
current control sample, ``advance(command)`` holds ``command`` over one
sample and moves to the next.  Units are those of the plant (mm for the
maRTHS plant).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from hybridsim.modules.kernels import kernel


def rk4_hold_map(a: np.ndarray, b: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """(Phi, Gamma) of one classical RK4 step of x' = A x + B u with u held over the step h (s).

    Phi = I + hA + (hA)^2/2 + (hA)^3/6 + (hA)^4/24 and
    Gamma = h (I + hA/2 + (hA)^2/6 + (hA)^3/24) B: what a fixed-step ode4
    solver does on a linear system (maRTHS §8.4).  Phi is a polynomial in A,
    so the input-output map does not depend on the realisation.
    """
    ha = h * np.asarray(a, float)
    eye = np.eye(ha.shape[0])
    ha2 = ha @ ha
    ha3 = ha2 @ ha
    phi = eye + ha + ha2 / 2 + ha3 / 6 + ha3 @ ha / 24
    gamma = h * (eye + ha / 2 + ha2 / 6 + ha3 / 24) @ np.asarray(b, float)
    return phi, gamma


@kernel
def held_step(transition: np.ndarray, input_map: np.ndarray, x: np.ndarray, command: np.ndarray) -> np.ndarray:
    """Phi x + Gamma u, sums in index order (compiled: the plant advances every control sample)."""
    out = np.empty(x.size)
    for i in range(x.size):
        total = 0.0
        for j in range(x.size):
            total += transition[i, j] * x[j]
        for j in range(command.size):
            total += input_map[i, j] * command[j]
        out[i] = total
    return out


@kernel
def held_output(output_map: np.ndarray, x: np.ndarray) -> np.ndarray:
    """y = C x (a BLAS product, bit for bit numpy's ``dot``)."""
    return np.dot(output_map, x)


@kernel
def _held_response(transition: np.ndarray, input_map: np.ndarray, x: np.ndarray,
                   commands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The states x_0 .. x_{N-1} under ``commands`` (N x inputs) from ``x``, and x_N: :func:`held_step` N times."""
    states = np.empty((commands.shape[0], x.size))
    for k in range(commands.shape[0]):
        states[k] = x
        x = held_step(transition, input_map, x, commands[k])
    return states, x


class Actuators(Protocol):
    def position(self) -> np.ndarray: ...

    def advance(self, command: np.ndarray) -> None: ...

    def state(self) -> list[float]: ...

    def set_state(self, state: list[float]) -> None: ...


class LinearActuators:
    """x_{k+1} = Phi x_k + Gamma u_k, y_k = C x_k (no feedthrough), from rest."""

    def __init__(self, transition: np.ndarray, input_map: np.ndarray, output_map: np.ndarray) -> None:
        self.transition = np.asarray(transition, float)
        self.input_map = np.asarray(input_map, float)
        self.output_map = np.asarray(output_map, float)
        self._x = np.zeros(self.transition.shape[0])

    @classmethod
    def rk4(cls, a: np.ndarray, b: np.ndarray, c: np.ndarray, sample_period: float) -> "LinearActuators":
        """A continuous plant (A, B, C) sampled as a fixed-step RK4 solver samples it."""
        phi, gamma = rk4_hold_map(a, b, sample_period)
        return cls(phi, gamma, c)

    def position(self) -> np.ndarray:
        return held_output(self.output_map, self._x)

    def advance(self, command: np.ndarray) -> None:
        self._x = held_step(self.transition, self.input_map, self._x, np.asarray(command, float))

    def state(self) -> list[float]:
        return self._x.tolist()

    def set_state(self, state: list[float]) -> None:
        self._x = np.array(state, float)

    def kernel_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Phi, Gamma, C and the state x (its own array, which a compiled run updates in place)."""
        return self.transition, self.input_map, self.output_map, self._x

    def response(self, commands: np.ndarray) -> np.ndarray:
        """Positions y_0 .. y_{N-1} (N x outputs) for a known command sequence (N x inputs), from the current state.

        Open loop only (the commands do not depend on the positions); the
        same recursion as ``position`` / ``advance``, and the state moves on.
        """
        states, self._x = _held_response(self.transition, self.input_map, self._x,
                                         np.ascontiguousarray(commands, dtype=float))
        return states @ self.output_map.T


class InstantActuators:
    """Perfect actuators: each held command is reached exactly by the end of its sample."""

    def __init__(self, channels: int) -> None:
        self._y = np.zeros(channels)

    def position(self) -> np.ndarray:
        return self._y.copy()

    def advance(self, command: np.ndarray) -> None:
        self._y = np.array(command, float)

    def state(self) -> list[float]:
        return self._y.tolist()

    def set_state(self, state: list[float]) -> None:
        self._y = np.array(state, float)
