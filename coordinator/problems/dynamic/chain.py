"""The chain of `hybridsim study dynamic` (docs/dynamic_modules.md): a linear 4-DOF shear chain split at x2 into
two dynamic `linear` modules (mass on both sides of the interface, part of x2's own mass inside a module) and the
coordinator's x2, and the same chain as one OpenSees model (``build``: zeroLength springs, nodal masses) for
OpenSees' own AlphaOS; its closed forms (the modes of the whole, HHT's spectral radius).

    ground -k1- x1 -k2- x2 -k3- x3 -k4- x4        lower module: [x2 | x1], upper module: [x2 | x3, x4]
"""

from __future__ import annotations

import numpy as np

M1, M2, M3, M4 = 1000.0, 1500.0, 800.0, 600.0     # kg
M2_UPPER = 500.0                                  # kg of x2's mass inside the upper module (the rest, 1000 kg, at the coordinator)
K1, K2, K3, K4 = 4.0e5, 3.0e5, 2.0e5, 1.0e5       # N/m
RAYLEIGH = 0.3                                    # 1/s, mass-proportional: C = a M everywhere


def build(ops):
    """The whole chain (nodes 0 fixed, 1-4 the masses; x only)."""
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    for node in range(5):
        ops.node(node, 0.0)
    ops.fix(0, 1)
    for node, mass in enumerate((M1, M2, M3, M4), start=1):
        ops.mass(node, mass)
    for tag, k in enumerate((K1, K2, K3, K4), start=1):
        ops.uniaxialMaterial("Elastic", tag, k)
        ops.element("zeroLength", tag, tag - 1, tag, "-mat", tag, "-dir", 1)


def matrices() -> tuple[np.ndarray, np.ndarray]:
    """(M, K) of the whole chain over x1..x4 (kg, N/m)."""
    k = np.array([[K1 + K2, -K2, 0, 0], [-K2, K2 + K3, -K3, 0], [0, -K3, K3 + K4, -K4], [0, 0, -K4, K4]])
    return np.diag([M1, M2, M3, M4]), k


def closed_form(t: np.ndarray, amplitude: float, omega: float) -> np.ndarray:
    """x2 (m) of the whole chain under a_g = amplitude sin(omega t) from rest: each mode q'' + a q' + w^2 q =
    -Gamma a_g (C = a M: modal damping a), its steady state plus the free vibration that starts it at rest."""
    import scipy.linalg

    m, k = matrices()
    out = np.zeros_like(t)
    squares, shapes = scipy.linalg.eigh(k, m)
    for w2, phi in zip(squares, shapes.T):
        gamma = (phi @ m @ np.ones(4)) / (phi @ m @ phi)
        z = -gamma * amplitude / (w2 - omega ** 2 + 1j * RAYLEIGH * omega)
        wd = np.sqrt(w2 - RAYLEIGH ** 2 / 4)
        a = -z.imag
        b = (-(1j * omega * z).imag + RAYLEIGH / 2 * a) / wd
        q = np.imag(z * np.exp(1j * omega * t)) + np.exp(-RAYLEIGH * t / 2) * (a * np.cos(wd * t) + b * np.sin(wd * t))
        out += phi[1] * q
    return out


def hht_spectral_radius(omega_dt: float, alpha: float) -> float:
    """Spectral radius of HHT-alpha's amplification matrix (Hilber, Hughes & Taylor 1977) for an undamped mode:
    a' + (1+alpha) w^2 d' - alpha w^2 d = 0 with Newmark's d', v' (beta = (1-alpha)^2/4, gamma = 1/2 - alpha)."""
    beta, gamma, w2 = (1 - alpha) ** 2 / 4, 0.5 - alpha, omega_dt ** 2
    new = np.array([[(1 + alpha) * w2, 0, 1], [1, 0, -beta], [0, 1, -gamma]])
    old = np.array([[alpha * w2, 0, 0], [1, 1, 0.5 - beta], [0, 1, 1 - gamma]])
    return float(np.max(np.abs(np.linalg.eigvals(np.linalg.solve(new, old)))))


def dynamic_table(alpha: float, substeps: int, record: np.ndarray, dt: float, influence: list[float]) -> dict:
    return {"internal": len(influence) - 1, "alpha": alpha, "substeps": substeps, "influence": influence,
            "ground_acceleration": record.tolist(), "ground_acceleration_dt": dt}


def modules(alpha: float, substeps: int, record: np.ndarray, dt: float) -> list[dict]:
    """The lower [x2 | x1] and upper [x2 | x3, x4] modules, each with its mass and damping."""
    lower_m, upper_m = np.diag([0.0, M1]), np.diag([M2_UPPER, M3, M4])
    lower_k = [[K2, -K2], [-K2, K1 + K2]]
    upper_k = [[K3, -K3, 0.0], [-K3, K3 + K4, -K4], [0.0, -K4, K4]]
    return [{"name": name, "kind": "linear", "config": {
        "dofs": ["x2"], "stiffness": k, "mass": m.tolist(), "damping": (RAYLEIGH * m).tolist(),
        "dynamic": dynamic_table(alpha, substeps, record, dt, [1.0] * len(k))}}
        for name, m, k in (("lower", lower_m, lower_k), ("upper", upper_m, upper_k))]


def experiment_table(alpha: float, substeps: int, record_file: str, record: np.ndarray, dt: float,
                     duration: float, output: str) -> dict:
    """The coordinator: x2 with 1000 kg (the rest of x2's mass is the upper module's), the two modules."""
    return {"experiment": {"name": "dynamic-chain", "dt": dt, "duration": duration},
            "structure": {"dofs": ["x2"], "mass_diagonal": [M2 - M2_UPPER], "damping": {"rayleigh": [RAYLEIGH, 0.0]},
                          "influence_dofs": ["x2"]},
            "ground_motion": {"file": record_file},
            "integrator": {"kind": "alpha-os", "alpha": alpha},
            "modules": modules(alpha, substeps, record, dt),
            "output": {"file": output}}
