"""`hybridsim study integrators`: the amplification matrices against the closed-form characteristic
polynomial of the generalized-alpha family (Chung & Hulbert 1993), the spectral radius measured through the
coordinator, CR's order of accuracy, and the stability limit with a delay against 2 xi / delay."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.problems.integrators import study
from hybridsim.coordinator.problems.integrators.schemes import SCHEMES


@pytest.mark.parametrize("omega_dt", [100.0, 1e4])
def test_kr_alpha_at_rho_inf_half_agrees_with_the_closed_form_from_the_matrix_and_measured(omega_dt):
    scheme = SCHEMES["kr-alpha(0.5)"]
    closed = study.closed_form_radius(scheme, omega_dt)
    # the closed form tends to rho_inf (Kolay & Ricles 2014): 0.537 at Omega = 100, 0.5017 at 1e4
    assert 0.5 < closed < (0.54 if omega_dt == 100.0 else 0.502)
    matrix = np.max(np.abs(np.linalg.eigvals(scheme.matrix(omega_dt))))
    assert matrix == pytest.approx(closed, rel=1e-9)
    (run,) = study.free_vibration(["kr-alpha(0.5)"], (omega_dt,))
    print(f"Omega = {omega_dt:g}: closed form {closed:.6f}, matrix {matrix:.6f}, measured {run.rho_measured:.6f}, "
          f"per-step amplitude ratio {run.step_ratio:.6f}")
    assert run.rho_measured == pytest.approx(closed, rel=1e-5)
    assert run.step_ratio == pytest.approx(closed, rel=0.01)  # three roots mix in a short window (module docstring)


def test_cr_is_non_dissipative_and_second_order_through_the_coordinator():
    rho = [np.max(np.abs(np.linalg.eigvals(SCHEMES["cr"].matrix(float(w))))) for w in study.OMEGAS]
    # at large Omega CR's principal roots approach a double root at -1, whose computed modulus carries an error
    # of order sqrt(eps) = 1.5e-8 (a defective eigenvalue): 1e-7, not the 1e-16 of a simple one
    assert np.max(np.abs(np.array(rho) - 1.0)) < 1e-7
    for run in study.free_vibration(["cr"]):
        assert run.rho_measured == pytest.approx(1.0, abs=1e-6)
    (cr,) = study.convergence(["cr"])
    print(f"CR errors {cr.errors}, order {cr.slope:.4f}")
    assert 1.95 < cr.slope < 2.05


def test_a_delay_limits_omega_dt_to_about_2_xi_over_the_delay():
    limits, estimate = study.delay_limits(), study.delay_estimate()
    for key, rows in limits.items():
        for delay, limit, guess in zip(study.DELAYS, rows["undershoot 0"], estimate):
            if delay >= 0.2:  # small Omega_crit, where the schemes are accurate and the continuous estimate holds
                assert limit == pytest.approx(guess, rel=0.03), key
    # no delay: central difference's own limit Omega = 2; the unconditionally stable schemes none below 1e3
    assert limits["central-difference"]["undershoot 0"][0] == pytest.approx(2.0, rel=1e-6)
    assert math.isinf(limits["cr"]["undershoot 0"][0])


def test_a_first_order_actuator_limits_omega_dt_by_its_delay_at_low_frequency():
    # x_m <- a x_m + (1 - a) c lags a slow command by a/(1 - a) steps (a = exp(-dt/tau)): a delay of that size
    limits, estimate = study.lag_limits(), study.lag_estimate()
    for key, row in limits.items():
        for lag, limit, guess in zip(study.LAGS, row, estimate):
            if lag >= 1.0:  # Omega_crit small (0.17): the schemes accurate, the low-frequency delay the one that acts
                assert limit == pytest.approx(guess, rel=0.05), key


def test_the_study_command_prints_json_for_one_scheme(capsys):
    assert main(["study", "integrators", "--scheme", "cr", "--json", "--no-files"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document["spectra"]) == {"cr"}
    assert document["convergence"][0]["slope"] == pytest.approx(2.0, abs=0.05)


@pytest.mark.long
def test_the_whole_study_writes_its_files(tmp_path):
    assert main(["study", "integrators", "--out", str(tmp_path / "out")]) == 0
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {"results.json", "table.txt", "spectra.png",
                                                               "delay_limits.png", "convergence.png"}
