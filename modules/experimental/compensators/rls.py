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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from modules.experimental.compensators.base import Compensator
from modules.experimental.compensators.filters import DirectFormII


class RlsCompensator(Compensator):
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
        self._psi, self._phi, self._update = np.zeros(taps), np.zeros(taps), np.zeros((taps, taps))

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> "RlsCompensator":
        """``theta0`` (taps), ``p0`` (taps x taps), ``filter_b``, ``filter_a`` and ``forgetting`` (default 1)."""
        try:
            return cls(table["theta0"], table["p0"], table["filter_b"], table["filter_a"],
                       float(table.get("forgetting", 1.0)))
        except KeyError as exc:
            raise ValueError(f"compensator 'rls' needs {exc.args[0]!r}") from None

    def command(self, target: float, measured: float) -> float:
        psi, phi = self._psi, self._phi  # the regressors, shifted in place
        psi[1:] = self.targets[:-1]
        psi[0] = target
        phi[1:] = self.filtered[:-1]
        phi[0] = self.measurement_filter.advance(measured)
        p_phi = self.p @ phi
        gain = p_phi / (self.forgetting + phi @ p_phi)
        prediction = self.theta @ phi
        gain_psi = gain @ psi
        free = self.command_filter.free_response()
        b0 = self.command_filter.b0
        command = float((self.theta @ psi + gain_psi * (free - prediction)) / (1.0 - b0 * gain_psi))
        filtered_command = b0 * command + free
        self.command_filter.advance(command)
        np.outer(gain, phi @ self.p, out=self._update)
        np.subtract(self.p, self._update, out=self.p)
        np.divide(self.p, self.forgetting, out=self.p)
        self.theta += gain * (filtered_command - prediction)
        self.targets, self._psi = psi, self.targets  # the buffers swap: no array is made per sample
        self.filtered, self._phi = phi, self.filtered
        return command

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
