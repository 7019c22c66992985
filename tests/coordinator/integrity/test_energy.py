"""The energy indicators against closed forms: a lagged spring's energy error, a linear SDOF's balance."""

from __future__ import annotations

import numpy as np
import openseespy.opensees as ops
import pytest
import scipy.sparse as sp

from hybridsim.coordinator.integrity.energy import EnergyBalance, EnergyError, StrainEnergy


def test_a_lagged_spring_adds_pi_k_a2_sin_omega_tau_a_cycle() -> None:
    """x_m(t) = x_c(t - tau) on a spring k: E_err over one cycle = pi k A^2 sin(omega tau) (closed form of
    integral k x_m d(x_m - x_c) over a period); trapezoidal error O(dt^2)."""
    k, amplitude, omega, tau, cycles, per_cycle = 2.0e6, 0.01, 2 * np.pi * 3.5, 1.76e-3, 4, 4000
    indicator = EnergyError()
    for t in np.linspace(0.0, cycles * 2 * np.pi / omega, cycles * per_cycle + 1):
        measured = amplitude * np.sin(omega * (t - tau))
        indicator.observe(np.array([amplitude * np.sin(omega * t)]), np.array([measured]), np.array([k * measured]))
    expected = cycles * np.pi * k * amplitude**2 * np.sin(omega * tau)
    assert abs(indicator.value - expected) < 1e-5 * expected


def test_a_linear_sdof_under_average_acceleration_closes_its_balance() -> None:
    """Newmark average acceleration (Chopra, Table 5.4.2) is the trapezoidal rule on v and a, so the
    trapezoidal balance E_in = E_k + E_d + E_r closes to roundoff; the bound is 1e-6 of E_in (the issue's)."""
    m, k, zeta, dt = 1.0e3, 4.0e5, 0.05, 0.005
    c = 2 * zeta * np.sqrt(k * m)
    t = np.arange(0.0, 10.0, dt)
    ground = 3.0 * np.sin(2 * np.pi * 1.3 * t) * np.exp(-0.2 * t)
    balance = EnergyBalance(mass=np.array([[m]]), damping=np.array([[c]]),
                            strain=StrainEnergy.of(np.array([[k]]), [np.array([0])]))
    x = v = 0.0
    a = -ground[0]
    k_hat = k + 2 * c / dt + 4 * m / dt**2
    for n, ag in enumerate(ground):
        if n:
            p = -m * ag + m * (4 * x / dt**2 + 4 * v / dt + a) + c * (2 * x / dt + v)
            x_new = p / k_hat
            v_new = 2 * (x_new - x) / dt - v
            a = 4 * (x_new - x) / dt**2 - 4 * v / dt - a
            x, v = x_new, v_new
        balance.observe(np.array([x]), np.array([v]), np.array([-m * ag]), np.array([k * x]))
    assert balance.input > 0.0
    assert abs(balance.restoring - 0.5 * k * x**2) < 1e-9 * balance.input
    assert abs(balance.residual) < 1e-6 * balance.input
    assert abs(balance.elastic - 0.5 * k * x**2) < 1e-9 * balance.input
    assert abs(balance.hysteretic) < 1e-9 * balance.input


def steel01_forces(x: np.ndarray, fy: float, k0: float, b: float) -> np.ndarray:
    """OpenSees' own Steel01 (no isotropic hardening) driven through the strains ``x``: its stresses."""
    ops.wipe()
    ops.uniaxialMaterial("Steel01", 1, fy, k0, b)
    ops.testUniaxialMaterial(1)
    forces = []
    for strain in x:
        ops.setStrain(float(strain))
        forces.append(ops.getStress())
    ops.wipe()
    return np.array(forces)


def test_a_cycled_steel01_spring_dissipates_its_parallelogram_and_keeps_f2_over_2k0() -> None:
    """Steel01 (k0, u_y, b) driven 0 -> A, then N cycles A -> -A -> A. Kinematic hardening: a cycle's loop is the
    parallelogram between f = b k0 x +- (1 - b) f_y, of area 4 (1 - b) f_y (A - u_y); the first quarter stores
    W = k0 u_y^2 / 2 + f_y d + b k0 d^2 / 2 (d = A - u_y) and ends at f_A = f_y + b k0 d, whose recoverable part is
    f_A^2 / (2 k0), so E_h = (1 - b) k0 d (u_y + b d / 2) + 4 N (1 - b) f_y d. The trapezoid errs at the kinks only:
    O(dx^2) with 5000 points a half cycle."""
    k0, uy, b, amplitude, cycles = 4.0e5, 0.005, 0.05, 0.02, 2
    fy, d = k0 * uy, amplitude - uy
    half = np.linspace(amplitude, -amplitude, 5001)[1:]
    x = np.concatenate([np.linspace(0.0, amplitude, 2501)] + [np.concatenate([half, -half])] * cycles)
    force = steel01_forces(x, fy, k0, b)
    zero = np.zeros((1, 1))
    balance = EnergyBalance(mass=zero, damping=zero, strain=StrainEnergy.of(np.array([[k0]]), [np.array([0])]))
    for xi, fi in zip(x, force):
        balance.observe(np.array([xi]), np.zeros(1), np.zeros(1), np.array([fi]))
    hysteretic = (1 - b) * k0 * d * (uy + b * d / 2) + 4 * cycles * (1 - b) * fy * d
    assert balance.elastic == pytest.approx((fy + b * k0 * d) ** 2 / (2 * k0), rel=1e-12)
    assert balance.hysteretic == pytest.approx(hysteretic, rel=1e-6)
    assert balance.residual == pytest.approx(-balance.restoring, rel=1e-12)  # no input: the work is the error


@pytest.mark.parametrize("sparse", [False, True])
def test_modules_sharing_a_dof_are_unloaded_together_and_a_linear_structure_keeps_half_xkx(sparse: bool) -> None:
    """A chain ground - k1 - x0 - k2 - x1 and a separate spring k3 at x2; modules [x0], [x0, x1], [x2]: the groups
    {x0, x1} and {x2}, and for r = K x the recoverable energy is 1/2 x^T K x (a linear structure keeps it all)."""
    k1, k2, k3 = 3.0e5, 1.0e5, 2.0e5
    stiffness = np.array([[k1 + k2, -k2, 0.0], [-k2, k2, 0.0], [0.0, 0.0, k3]])
    strain = StrainEnergy.of(sp.csr_matrix(stiffness) if sparse else stiffness,
                             [np.array([0]), np.array([0, 1]), np.array([2])])
    assert sorted(tuple(index) for index, _ in strain.groups) == [(0, 1), (2,)]
    x = np.array([0.01, -0.02, 0.005])
    assert strain(stiffness @ x) == pytest.approx(0.5 * x @ stiffness @ x, rel=1e-12)
