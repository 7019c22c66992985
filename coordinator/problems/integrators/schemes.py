"""The schemes of the study: each one's ``[integrator]`` table, its amplification matrix on a linear SDOF
(``integrators.amplification``) and, where one exists, the closed form of its characteristic polynomial."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hybridsim.coordinator.integrators.amplification import (NO_ERROR, Error, kr_alpha_matrix, rho_inf_weights,
                                                             newmark_family_matrix)


def generalized_alpha_polynomial(omega_dt: float, alpha_m: float, alpha_f: float, beta: float,
                                 gamma: float) -> np.ndarray:
    """Coefficients (highest power first) of the characteristic polynomial of the generalized-alpha method
    on an undamped SDOF (Chung & Hulbert 1993; weights alpha_m, alpha_f on step n): det(lambda I - A),
    eliminated by hand from (1-am) a1 + am a0 + W^2 ((1-af) d1 + af d0) = 0 and Newmark's two relations.
    KR-alpha shares it (Kolay & Ricles 2014), and so do the OS forms with K_I = k."""
    w2 = omega_dt ** 2
    am, af, b, g = alpha_m, alpha_f, beta, gamma
    return np.array([
        2.0 * ((af - 1.0) * b * w2 + am - 1.0),
        w2 * (-6.0 * af * b + 2.0 * af * g + af + 4.0 * b - 2.0 * g - 1.0) - 6.0 * am + 4.0,
        w2 * (6.0 * af * b - 4.0 * af * g - 2.0 * b + 2.0 * g - 1.0) + 6.0 * am - 2.0,
        w2 * (-2.0 * af * b + 2.0 * af * g - af) - 2.0 * am])


@dataclass(frozen=True)
class Scheme:
    """One configuration of the study."""

    key: str
    table: dict[str, Any]
    """the ``[integrator]`` table"""
    matrix: Callable[..., np.ndarray]
    """A(omega dt, xi=..., error=...)"""
    weights: tuple[float, float, float, float] | None = None
    """(alpha_m, alpha_f, beta, gamma) of its closed-form polynomial, on step n"""


def _os(alpha: float, alpha_m: float, beta: float, gamma: float) -> Callable[..., np.ndarray]:
    def matrix(omega_dt: float, xi: float = 0.0, error: Error = NO_ERROR) -> np.ndarray:
        return newmark_family_matrix(omega_dt, alpha=alpha, alpha_m=alpha_m, beta=beta, gamma=gamma, xi=xi,
                                     error=error)
    return matrix


def _kr(rho_inf: float) -> Callable[..., np.ndarray]:
    def matrix(omega_dt: float, xi: float = 0.0, error: Error = NO_ERROR) -> np.ndarray:
        return kr_alpha_matrix(omega_dt, rho_inf=rho_inf, xi=xi, error=error)
    return matrix


def _generalized_alpha(key: str, table: dict[str, Any], rho_inf: float) -> Scheme:
    """A scheme whose linear step is the generalized-alpha method's with the weights of ``rho_inf``."""
    am, af, b, g = rho_inf_weights(rho_inf)
    return Scheme(key, table, _os(-af, -am, b, g), (am, af, b, g))


def _alpha_os(alpha: float) -> Scheme:
    b, g = (1.0 - alpha) ** 2 / 4.0, (1.0 - 2.0 * alpha) / 2.0
    return Scheme(f"alpha-os({alpha:g})", {"kind": "alpha-os", "alpha": alpha}, _os(alpha, 0.0, b, g),
                  (0.0, -alpha, b, g))


def _kr_scheme(rho_inf: float) -> Scheme:
    key, table = ((f"kr-alpha({rho_inf:g})", {"kind": "kr-alpha", "rho_inf": rho_inf}) if rho_inf != 1.0
                  else ("cr", {"kind": "cr"}))
    return Scheme(key, table, _kr(rho_inf), rho_inf_weights(rho_inf))


SCHEMES: dict[str, Scheme] = {s.key: s for s in (
    _alpha_os(-0.05),
    _alpha_os(-1.0 / 3.0),
    _generalized_alpha("generalized-alpha-os(0.5)", {"kind": "generalized-alpha-os", "rho_inf": 0.5}, 0.5),
    _kr_scheme(1.0),
    _kr_scheme(0.5),
    _kr_scheme(0.0),
    # average acceleration, iterated: on a linear structure its first trial is the solution
    Scheme("newmark", {"kind": "newmark"}, _os(0.0, 0.0, 0.25, 0.5), (0.0, 0.0, 0.25, 0.5)),
    # on a linear structure with K = K_I its step ends at the generalized-alpha solution
    _generalized_alpha("hht-fixed-iterations(0.5)", {"kind": "hht-fixed-iterations", "rho_inf": 0.5, "iterations": 2},
                       0.5),
    Scheme("central-difference", {"kind": "central-difference"}, _os(0.0, 0.0, 0.0, 0.5), (0.0, 0.0, 0.0, 0.5)),
    Scheme("newmark-explicit(0.6)", {"kind": "newmark-explicit", "gamma": 0.6}, _os(0.0, 0.0, 0.0, 0.6),
           (0.0, 0.0, 0.0, 0.6)),
    Scheme("hht-explicit(-0.1, 0.7)", {"kind": "hht-explicit", "alpha": -0.1, "gamma": 0.7},
           _os(-0.1, 0.0, 0.0, 0.7), (0.0, 0.1, 0.0, 0.7)),
)}
