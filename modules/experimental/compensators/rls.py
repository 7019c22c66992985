"""RLS adaptive compensation (RLS-AC, "RoDeAC"; Quiroz, Galmez & Fermandois 2024), maRTHS §11.

A 4-tap FIR on the target, u(k) = theta_k^T psi_k, psi_k = [xt(k) .. xt(k-3)].
Its taps identify an inverse plant by recursive least squares from the
low-pass filtered measurement phi_k = [xf(k) .. xf(k-3)] to the filtered
command uf(k) (the same Butterworth filter on both):

    e = uf(k) - theta_{k-1}^T phi_k,  g = P phi / (lambda + phi^T P phi),
    P_k = (P - g phi^T P) / lambda,   theta_k = theta_{k-1} + g e.

uf(k) depends on u(k), which depends on theta_k: a linear algebraic loop,
solved exactly with uf(k) = b0 u(k) + z(k) (z: the filter's free response):

    u(k) = [theta_{k-1}^T psi + g^T psi (z - pred)] / (1 - b0 g^T psi).

A sample is one compiled kernel (:func:`rls_sample`, numba) that updates the
taps, P, the regressors and both filters in place: about 1 us instead of the
~18 us of the same arithmetic as numpy calls.  Sums run in index order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Key, Number, Numbers, Schema
from hybridsim.modules.experimental.compensators.base import Compensator
from hybridsim.modules.experimental.compensators.filters import DirectFormII, df2_advance, df2_free_response
from hybridsim.modules.kernels import dot, kernel


@kernel
def _shift_in(line: np.ndarray, value: float) -> None:
    """line = [value, line[0], .., line[-2]], in place."""
    for i in range(line.size - 1, 0, -1):
        line[i] = line[i - 1]
    line[0] = value


@kernel
def rls_sample(theta: np.ndarray, p: np.ndarray, psi: np.ndarray, phi: np.ndarray, gain: np.ndarray,
               b: np.ndarray, a: np.ndarray, measurement_w: np.ndarray, command_w: np.ndarray,
               forgetting: float, target: float, measured: float) -> float:
    """One RLS-AC sample in place (the module docstring's equations); returns the command u(k).

    ``psi``, ``phi`` are the regressors of the last sample, ``gain`` is scratch,
    ``measurement_w``, ``command_w`` the delay lines of the two filters (b, a).
    """
    taps = theta.size
    _shift_in(psi, target)
    _shift_in(phi, df2_advance(b, a, measurement_w, measured))
    for i in range(taps):  # gain = P phi / (lambda + phi^T P phi)
        gain[i] = dot(p[i], phi)
    denominator = forgetting + dot(phi, gain)
    for i in range(taps):
        gain[i] /= denominator
    prediction = dot(theta, phi)
    gain_psi = dot(gain, psi)
    free = df2_free_response(b, a, command_w)
    command = (dot(theta, psi) + gain_psi * (free - prediction)) / (1.0 - b[0] * gain_psi)
    filtered_command = b[0] * command + free
    df2_advance(b, a, command_w, command)
    for j in range(taps):  # P = (P - g phi^T P) / lambda, column by column
        phi_p = 0.0
        for i in range(taps):
            phi_p += phi[i] * p[i, j]
        for i in range(taps):
            p[i, j] = (p[i, j] - gain[i] * phi_p) / forgetting
    error = filtered_command - prediction
    for i in range(taps):
        theta[i] += gain[i] * error
    return command


class RlsCompensator(Compensator):
    CONFIG = Schema("RLS adaptive compensation", "Recursive least squares on a filtered measurement (maRTHS).", {
        "theta0": Key(Numbers("", (1,)), "initial parameters (taps)", required=True),
        "p0": Key(Numbers("", (2,)), "initial covariance (taps x taps)", required=True),
        "filter_b": Key(Numbers("", (1,)), "measurement filter numerator", required=True),
        "filter_a": Key(Numbers("", (1,)), "measurement filter denominator", required=True),
        "forgetting": Key(Number("", 0, 1, open_minimum=True), "forgetting factor", default=1.0),
    })
    """One RLS-AC channel with initial taps ``theta0`` and inverse correlation ``p0``."""

    name = "rls"

    def __init__(self, theta0: Sequence[float], p0: Sequence[Sequence[float]], filter_b: Sequence[float],
                 filter_a: Sequence[float], forgetting: float = 1.0) -> None:
        self.theta = np.array(theta0, float)
        self.p = np.array(p0, float)
        taps = self.theta.size
        if self.p.shape != (taps, taps):
            raise ValueError(f"RLS: P0 must be {taps}x{taps} for {taps} taps, got {self.p.shape}")
        if not 0 < forgetting <= 1:
            raise ValueError(f"RLS: the forgetting factor must be in (0, 1], got {forgetting}")
        self.forgetting = float(forgetting)
        self.measurement_filter = DirectFormII(filter_b, filter_a)
        self.command_filter = DirectFormII(filter_b, filter_a)
        self.targets = np.zeros(taps)
        """psi: xt(k), xt(k-1), ..."""
        self.filtered = np.zeros(taps)
        """phi: xf(k), xf(k-1), ..."""
        self._gain = np.zeros(taps)

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> "RlsCompensator":
        """``theta0`` (taps), ``p0`` (taps x taps), ``filter_b``, ``filter_a`` and ``forgetting`` (default 1)."""
        try:
            return cls(table["theta0"], table["p0"], table["filter_b"], table["filter_a"],
                       float(table.get("forgetting", 1.0)))
        except KeyError as exc:
            raise ValueError(f"compensator 'rls' needs {exc.args[0]!r}") from None

    def command(self, target: float, measured: float) -> float:
        return rls_sample(*self.kernel_arrays(), self.forgetting, float(target), float(measured))

    def kernel_arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays :func:`rls_sample` updates in place (the compensator's own), in its order."""
        return (self.theta, self.p, self.targets, self.filtered, self._gain, self.command_filter.b,
                self.command_filter.a, self.measurement_filter.w, self.command_filter.w)

    def parameters(self) -> np.ndarray:
        return self.theta.copy()

    def state(self) -> dict[str, Any]:
        return {"theta": self.theta.tolist(), "p": self.p.tolist(), "targets": self.targets.tolist(),
                "filtered": self.filtered.tolist(), "measurement_filter": self.measurement_filter.state(),
                "command_filter": self.command_filter.state()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.theta = np.array(state["theta"], float)
        self.p = np.array(state["p"], float)
        self.targets = np.array(state["targets"], float)
        self.filtered = np.array(state["filtered"], float)
        self.measurement_filter.set_state(state["measurement_filter"])
        self.command_filter.set_state(state["command_filter"])
