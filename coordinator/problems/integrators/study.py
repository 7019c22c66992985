"""The computations of `hybridsim study integrators`.

- ``spectra``: spectral radius, period elongation and amplitude decay against Omega = omega dt from each
  scheme's amplification matrix, beside the closed-form characteristic polynomial's spectral radius;
- ``free_vibration``: the same spectral radius measured through the coordinator: an SDOF (m = 1 kg,
  k = Omega^2 N/m, dt = 1 s) as a ``linear`` module, one ground-acceleration pulse, then free vibration;
  the recorded displacements' linear recurrence (Prony's method, its order the rank of their Hankel
  matrix) gives the measured eigenvalues, and the last per-step amplitude ratio is quoted beside them;
- ``delay_limits``, ``lag_limits``: the stability limit Omega_crit with a constant actuator delay (a
  fraction of dt) and an undershoot in the loop, or behind a first-order actuator, beside the estimate
  2 xi / delay (a delay tau turns k x(t - tau) into a negative damping k tau x', Horiuchi et al. 1999;
  a first-order actuator, x_m <- a x_m + (1 - a) c with a = exp(-dt/tau), lags a slow command by
  a/(1 - a) steps, so its estimate is 2 xi (1 - a)/a);
- ``convergence``: the order of accuracy, measured through the coordinator: an SDOF (1 Hz, 2 % damping)
  from rest under a sine ground acceleration against its closed form (Chopra, Dynamics of Structures,
  section 3.2), at dt = T/50 .. T/400; the slope of log error against log dt.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.integrators.amplification import Error, critical_omega_dt, spectral_radius
from hybridsim.coordinator.problems.integrators.schemes import SCHEMES, Scheme, generalized_alpha_polynomial

OMEGAS = np.geomspace(1e-2, 1e4, 61)
"""Omega = omega dt of the spectra"""
FREE_OMEGAS = (0.1, 1.0, 100.0, 1e4)
DELAYS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
"""actuator delays, in steps of dt"""
UNDERSHOOTS = (0.0, 0.05)
LAGS = (0.05, 0.1, 0.2, 0.5, 1.0)
"""first-order actuator time constants, in steps of dt"""
DELAY_XI = 0.05
"""the structure's damping ratio in the delay study (an undamped one is unstable under any delay)"""
DELAY_SCHEMES = ("alpha-os(-0.05)", "generalized-alpha-os(0.5)", "cr", "kr-alpha(0.5)", "central-difference")
CONVERGENCE_DIVISORS = (50, 100, 200, 400)
"""dt = T / divisor"""


def principal(eigenvalues: np.ndarray) -> complex | None:
    """The principal root: the complex eigenvalue of largest modulus with Im > 0 (None when all are real)."""
    complex_ = [z for z in eigenvalues if z.imag > 1e-12]
    return max(complex_, key=abs) if complex_ else None


def period_and_decay(root: complex | None, omega_dt: float) -> tuple[float, float]:
    """(period elongation (T_bar - T)/T, amplitude decay per cycle 1 - exp(-2 pi xi_bar)) of a principal root
    lambda = exp(Omega_bar (-xi_bar + i)) (Hughes 1987, section 9.3); NaN when the roots are real."""
    if root is None:
        return math.nan, math.nan
    omega_bar = math.atan2(root.imag, root.real)
    xi_bar = -math.log(abs(root)) / omega_bar
    return omega_dt / omega_bar - 1.0, 1.0 - math.exp(-2.0 * math.pi * xi_bar)


def closed_form_radius(scheme: Scheme, omega_dt: float) -> float:
    """max |root| of the scheme's characteristic polynomial (NaN when it has none here)."""
    if scheme.weights is None:
        return math.nan
    return float(np.max(np.abs(np.roots(generalized_alpha_polynomial(omega_dt, *scheme.weights)))))


def spectra(keys: list[str]) -> dict[str, dict[str, list[float]]]:
    """Per scheme: spectral radius (matrix and closed form), period elongation, amplitude decay on OMEGAS."""
    out = {}
    for key in keys:
        s = SCHEMES[key]
        rows: dict[str, list[float]] = {"rho": [], "rho_closed": [], "period_elongation": [], "amplitude_decay": []}
        for w in OMEGAS:
            eigenvalues = np.linalg.eigvals(s.matrix(float(w)))
            rows["rho"].append(float(np.max(np.abs(eigenvalues))))
            rows["rho_closed"].append(closed_form_radius(s, float(w)))
            pe, ad = period_and_decay(principal(eigenvalues), float(w))
            rows["period_elongation"].append(pe)
            rows["amplitude_decay"].append(ad)
        out[key] = rows
    return out


# -- runs through the coordinator -----------------------------------------------------------------------------

def _record(folder: Path, name: str, dt: float, values: np.ndarray) -> Path:
    path = folder / f"{name}.csv"
    np.savetxt(path, np.column_stack([dt * np.arange(values.size), values]), delimiter=",",
               header="time_s,accel_m_s2", comments="")
    return path


def run_sdof(folder: Path, name: str, integrator: dict[str, Any], mass: float, stiffness: float, damping: float,
             dt: float, record: Path, steps: int) -> Any:
    """A coordinator run of an SDOF with one in-process ``linear`` module; its result (displacement, ...)."""
    from hybridsim.coordinator.experiment import parse_experiment
    from hybridsim.coordinator.simulation import run_experiment

    table = {
        "experiment": {"name": name, "dt": dt, "duration": steps * dt},
        "structure": {"dofs": ["x"], "mass_diagonal": [mass], "influence": [1.0],
                      "damping": {"matrix": [[damping]]}},
        "ground_motion": {"file": str(record)},
        "integrator": integrator,
        "modules": [{"name": "spring", "kind": "linear", "config": {"dofs": ["x"], "stiffness": [[stiffness]]}}],
        "output": {"file": str(folder / f"{name}.h5")},
    }
    return run_experiment(parse_experiment(table, base_dir=folder))


def prony_roots(d: np.ndarray, order_max: int = 4) -> np.ndarray:
    """The roots of the shortest linear recurrence d_{n+1} = sum c_j d_{n-j} that the samples ``d`` satisfy: its
    order is the numerical rank of their Hankel matrix (singular values above 1e-9 of the largest)."""
    hankel = np.array([d[i:i + order_max + 1] for i in range(d.size - order_max)])
    s = np.linalg.svd(hankel, compute_uv=False)
    order = min(max(1, int(np.sum(s > 1e-9 * s[0]))), order_max)
    past = np.array([d[i:i + order][::-1] for i in range(d.size - order)])
    coefficients = np.linalg.lstsq(past, d[order:], rcond=None)[0]
    return np.roots(np.concatenate([[1.0], -coefficients]))


@dataclass
class FreeVibration:
    scheme: str
    omega_dt: float
    rho_measured: float
    """max |root| of the recorded displacements' recurrence"""
    step_ratio: float
    """the per-step amplitude ratio at the window's end, sqrt(D_{n+1} / D_n) with D_n = d_n^2 - d_{n-1} d_{n+1}
    (exactly |lambda| for one damped oscillation d_n = Re(c lambda^n)); |d_{n+1} / d_n| when D vanishes (real roots)"""
    rho_matrix: float
    rho_closed: float


def step_ratio(d: np.ndarray) -> float:
    """The per-step amplitude ratio at the end of ``d`` (see :class:`FreeVibration`)."""
    envelope = d[1:-1] ** 2 - d[:-2] * d[2:]
    if abs(envelope[-1]) > 1e-6 * d[-2] ** 2:
        return float(math.sqrt(abs(envelope[-1] / envelope[-2])))
    return float(abs(d[-1] / d[-2]))


FREE_WINDOW = (4, 28)
"""steps of the free vibration analysed: after the pulse (step 1) has left the weighted loads, before a
dissipative scheme's response reaches rounding (0.5^28 = 4e-9 of its start at rho_inf = 0.5)"""


def free_vibration(keys: list[str], omegas: tuple[float, ...] = FREE_OMEGAS) -> list[FreeVibration]:
    """The spectral radius measured through the coordinator (see the module docstring), where the scheme is stable."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        steps = FREE_WINDOW[1] + 2
        pulse = np.zeros(steps + 2)
        pulse[1] = 1.0
        record = _record(folder, "pulse", 1.0, pulse)
        for key in keys:
            s = SCHEMES[key]
            for w in omegas:
                rho = spectral_radius(s.matrix(w))
                if rho > 1.0 + 1e-9:
                    continue  # a conditionally stable scheme past its limit: the coordinator refuses it
                result = run_sdof(folder, f"free-{len(out)}", s.table, 1.0, w * w, 0.0, 1.0, record, steps)
                d = result.displacement[FREE_WINDOW[0]:FREE_WINDOW[1] + 1, 0]
                roots = prony_roots(d / np.max(np.abs(d)))
                out.append(FreeVibration(key, w, float(np.max(np.abs(roots))), step_ratio(d), rho,
                                         closed_form_radius(s, w)))
    return out


def delay_limits(xi: float = DELAY_XI) -> dict[str, dict[str, list[float]]]:
    """Per scheme and undershoot: Omega_crit at each delay of DELAYS (inf: stable up to Omega = 1e3)."""
    out = {}
    for key in DELAY_SCHEMES:
        s = SCHEMES[key]
        out[key] = {f"undershoot {u:g}": [critical_omega_dt(lambda w, e=Error(delay, u): s.matrix(w, xi=xi, error=e))
                                          for delay in DELAYS] for u in UNDERSHOOTS}
    return out


def lag_limits(xi: float = DELAY_XI) -> dict[str, list[float]]:
    """Per scheme: Omega_crit behind a first-order actuator of each time constant of LAGS (no delay)."""
    return {key: [critical_omega_dt(lambda w, e=Error(lag=lag): SCHEMES[key].matrix(w, xi=xi, error=e))
                  for lag in LAGS] for key in DELAY_SCHEMES}


def lag_estimate(xi: float = DELAY_XI) -> list[float]:
    """2 xi (1 - a)/a with a = exp(-1/lag): the first-order actuator's delay at low frequency, a/(1 - a) steps."""
    return [2.0 * xi * (1.0 - math.exp(-1.0 / lag)) / math.exp(-1.0 / lag) for lag in LAGS]


def delay_estimate(xi: float = DELAY_XI) -> list[float]:
    """2 xi / delay (Omega_crit from the negative damping of a delay; inf without one)."""
    return [2.0 * xi / d if d else math.inf for d in DELAYS]


@dataclass
class Convergence:
    scheme: str
    divisors: tuple[int, ...]
    errors: list[float]
    """max |x - exact| / max |exact| at dt = T / divisor"""

    @property
    def slope(self) -> float:
        """the order of accuracy: log2 of the error ratio between the two finest steps"""
        return math.log2(self.errors[-2] / self.errors[-1])


def sine_response(t: np.ndarray, omega: float, zeta: float, p0_over_k: float, forcing: float) -> np.ndarray:
    """x(t) from rest under p0 sin(forcing t) (Chopra, Dynamics of Structures, section 3.2)."""
    r = forcing / omega
    q = (1.0 - r * r) ** 2 + (2.0 * zeta * r) ** 2
    c, d = p0_over_k * (1.0 - r * r) / q, -p0_over_k * 2.0 * zeta * r / q
    omega_d = omega * math.sqrt(1.0 - zeta * zeta)
    a, b = -d, (zeta * omega * (-d) - c * forcing) / omega_d
    return (np.exp(-zeta * omega * t) * (a * np.cos(omega_d * t) + b * np.sin(omega_d * t))
            + c * np.sin(forcing * t) + d * np.cos(forcing * t))


def convergence(keys: list[str], divisors: tuple[int, ...] = CONVERGENCE_DIVISORS, duration: float = 3.0
                ) -> list[Convergence]:
    """Errors against the closed form at each dt, through the coordinator (see the module docstring)."""
    period, zeta, amplitude, forcing = 1.0, 0.02, 1.0, 0.7 * 2.0 * math.pi
    omega = 2.0 * math.pi / period
    mass, stiffness = 1.0, omega * omega
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for key in keys:
            errors = []
            for divisor in divisors:
                dt = period / divisor
                steps = round(duration / dt)
                times = dt * np.arange(steps + 1)
                record = _record(folder, f"sine-{divisor}", dt, amplitude * np.sin(forcing * times))
                result = run_sdof(folder, f"conv-{key}-{divisor}", SCHEMES[key].table, mass, stiffness,
                                  2.0 * zeta * omega * mass, dt, record, steps)
                exact = sine_response(times, omega, zeta, -mass * amplitude / stiffness, forcing)
                x = result.displacement[:steps + 1, 0]
                errors.append(float(np.max(np.abs(x - exact)) / np.max(np.abs(exact))))
            out.append(Convergence(key, divisors, errors))
    return out
