"""The metrics of section 10 on hand-made histories, and on runs whose errors are known by derivation."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.implicit_rths.methods import StepReport
from hybridsim.coordinator.problems.implicit_rths.cases import Variant, build_case, run_variant
from hybridsim.coordinator.problems.implicit_rths.metrics import (exact_step_targets, response_errors, run_metrics,
                                                        single_step_errors, timing)


def test_response_errors_by_hand() -> None:
    ref = np.array([0.0, 2.0, -4.0, 2.0])
    d = np.array([0.0, 2.5, -3.0, 2.0])
    errors = response_errors(d, ref)
    assert errors.peak_pct == pytest.approx(100 * 1.0 / 4.0)
    assert errors.rms_pct == pytest.approx(100 * np.sqrt((0.25 + 1.0) / 4) / np.sqrt(24 / 4))
    assert errors.peak_value_pct == pytest.approx(100 * (3.0 - 4.0) / 4.0)


def test_single_step_errors_by_hand() -> None:
    d = np.array([1.0, 2.1, 2.9])
    d_star = np.array([2.0, 3.0])  # exact step ends from d_0 = 1 and from d_1 = 2.1
    first, overall = single_step_errors(d, d_star)
    assert first == pytest.approx(100 * 0.1 / 1.0)
    assert overall == pytest.approx(100 * np.sqrt(0.01 + 0.01) / np.sqrt(1.0 + 0.81))


def test_timing_medians_by_hand() -> None:
    reports = (StepReport(3, (30, 10, 20)), StepReport(3, (40, 12, 22)), StepReport(2, (50, 24)))
    t = timing(reports, sample_period=45e-9, dt=70e-9)
    assert (t.first_us, t.inner_us, t.last_us) == pytest.approx((0.040, 0.011, 0.022))
    assert t.step_us == pytest.approx(0.074)  # step sums 60, 74, 74 ns
    assert t.per_iteration_us == pytest.approx(np.median([60 / 3, 74 / 3, 74 / 2]) / 1e3)
    assert (t.worst_iteration_us, t.worst_step_us) == pytest.approx((0.050, 0.074))
    assert (t.late_iterations, t.late_steps) == (1, 2)


def test_the_reference_has_no_single_step_error() -> None:
    """d*_{i+1} from the reference's own state is the reference's next state."""
    case = build_case("S2")
    reference = case.reference()
    d_star = exact_step_targets(case, reference)
    np.testing.assert_allclose(d_star, reference.displacement[1:], rtol=0, atol=1e-17)


def test_new_method_start_up_error_on_the_building_from_rest() -> None:
    """M1 from rest: the prediction of step 0 is zero, so every sample of step 0 has y = f = 0.  With
    rho_E = 0 the first solve gives d_1 = (K_PD + K_N)^-1 F_EQ,1 and the second confirms it (R stays 0),
    against d*_1 = (K_PD + K_N + K_E u_e u_e^T)^-1 F_EQ,1."""
    case = build_case("M1", short=True)
    s = case.structure
    k_pd = 4 * s.mass / case.dt**2
    f_eq = case.loads[1]
    d1 = np.linalg.solve(k_pd + s.stiffness, f_eq)[0]
    d1_star = np.linalg.solve(k_pd + s.stiffness_with_specimen(20e3), f_eq)[0]
    run = run_variant(case, Variant("ncdc-nearest", 0.0))
    metrics = run_metrics(case, case.reference(), run)
    assert metrics.first_step_error_pct == pytest.approx(100 * abs(d1 - d1_star) / abs(d1_star), rel=1e-9)
