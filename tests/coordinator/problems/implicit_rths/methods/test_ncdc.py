"""The nearly-complete delay compensation method: V5, its commands, its safeguard and its k_max count."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.implicit_rths.methods import Measurement, NcdcMethod, SplitStructure, run


def test_v5_interp_rho_one_linear_ideal_actuator_equals_the_exact_reference(sdof, free_vibration,
                                                                             free_vibration_reference) -> None:
    """S2 structure, ideal actuator: linear interpolation of a linear spring's force is exact."""
    history, _ = free_vibration(NcdcMethod(sdof, 0.01, 10, search="interp"), steps=100)
    assert not any(r.outside_range for r in history.reports)  # V5's condition: every target inside the window
    reference = free_vibration_reference(0.01, 100)
    np.testing.assert_allclose(history.displacement, reference.displacement, rtol=0, atol=1e-9 * 0.01)
    # with the exact tangent the second solve changes nothing: two solves per step
    assert set(history.iterations) == {2}


def test_commands_ramp_to_the_over_predicted_displacement(sdof, free_vibration) -> None:
    """p_{i+1} = d_i + v_i h + a_i h^2 / 2, h = Dt + 2 dt; the j-th command is p_i + (j/n)(p_{i+1} - p_i)."""
    history, lab = free_vibration(NcdcMethod(sdof, 0.01, 10), steps=20)
    h = 0.01 + 2 * 0.001
    d, v, a = (x[:, 0] for x in (history.displacement, history.velocity, history.acceleration))
    p = np.concatenate([[0.01], d[:-1] + v[:-1] * h + 0.5 * a[:-1] * h * h])
    expected = [p[i] + j / 10 * (p[i + 1] - p[i]) for i in range(20) for j in range(1, 11)]
    np.testing.assert_allclose(lab.commands, expected, rtol=0, atol=1e-15)
    # the ideal actuator has reached each command one sample later
    np.testing.assert_allclose(lab.positions[1:], lab.commands, rtol=0, atol=0)


class ScriptedSite:
    """A lab that answers every command with the same measurement (a test double for the clock)."""

    def __init__(self, sample_period: float, start: Measurement, answer: Measurement) -> None:
        self.sample_period = sample_period
        self._now, self._answer = start, answer

    def reading(self) -> Measurement:
        return self._now

    def drive(self, command: float) -> Measurement:
        self._now = self._answer
        return self._now


def two_sample_step(method: NcdcMethod, target: float, f1: float) -> None:
    """One step, n = 1, window {(0, 0), (1e-3, f1)}, with F_EQ,1 = target * (K_PD + K_N) and R_E,0 = 0."""
    k_lhs = 4.0 / 0.01**2 + 2e3
    site = ScriptedSite(0.01, Measurement(0.0, 0.0), Measurement(1e-3, f1))
    run(method, site, np.array([[0.0], [target * k_lhs]]), np.zeros(1), np.zeros(1))


def test_two_cycle_safeguard_averages_the_last_two_iterates_and_forces() -> None:
    """rho_E = 0 on the SDOF: x^(k) = (F_EQ - R^(k-1)) / (K_PD + K_N) depends on the last force only.

    Window y = (0, 1 mm); F_EQ / (K_PD + K_N) = 0.8 mm, f1 / (K_PD + K_N) = 0.6 mm.  x1 = 0.8 mm picks
    sample 1, x2 = 0.2 mm picks sample 0, x3 = 0.8 mm picks sample 1 again: the safeguard stops at k = 3
    with d = (0.8 + 0.2) / 2 mm and R = (f1 + 0) / 2.
    """
    structure = SplitStructure(np.eye(1), np.zeros((1, 1)), np.array([[2e3]]), specimen_dof=0,
                               specimen_stiffness=2e3)
    method = NcdcMethod(structure, 0.01, 1, rho_e=0.0)
    k_lhs = 4.0 / 0.01**2 + 2e3
    two_sample_step(method, 0.8e-3, 0.6e-3 * k_lhs)
    report = method.report
    assert (report.iterations, report.safeguard, report.converged) == (3, True, True)
    assert method.displacement[0] == pytest.approx(0.5e-3, rel=1e-12)
    assert method.specimen_force == pytest.approx(0.3e-3 * k_lhs, rel=1e-12)


def test_a_step_that_reaches_k_max_keeps_the_last_iterate_and_is_counted() -> None:
    """Interp on a linear spring with rho_E = 0 contracts by K_E / (K_PD + K_N) per solve; k_max = 2 stops early."""
    structure = SplitStructure(np.eye(1), np.zeros((1, 1)), np.array([[2e3]]), specimen_dof=0,
                               specimen_stiffness=2e3)
    method = NcdcMethod(structure, 0.01, 1, rho_e=0.0, search="interp", max_iterations=2)
    k_lhs = 4.0 / 0.01**2 + 2e3
    two_sample_step(method, 0.5e-3, 1e-3 * 2e3)  # the window's force is 2e3 * y: a linear spring
    assert (method.report.iterations, method.report.converged) == (2, False)
    x1 = 0.5e-3
    x2 = x1 + (0.5e-3 * k_lhs - k_lhs * x1 - 2e3 * x1) / k_lhs
    assert method.displacement[0] == pytest.approx(x2, rel=1e-12)


@pytest.mark.parametrize("options", [{"search": "closest"}, {"tolerance": 0.0}, {"window_steps": 0},
                                     {"over_prediction_samples": -1}])
def test_bad_options_are_refused(sdof, options: dict) -> None:
    with pytest.raises(ValueError):
        NcdcMethod(sdof, 0.01, 10, **options)


def test_site_with_another_sample_period_is_refused(sdof) -> None:
    site = ScriptedSite(0.002, Measurement(0.0, 0.0), Measurement(0.0, 0.0))
    with pytest.raises(ValueError, match="samples every"):
        run(NcdcMethod(sdof, 0.01, 10), site, np.zeros((2, 1)), np.zeros(1), np.zeros(1))
