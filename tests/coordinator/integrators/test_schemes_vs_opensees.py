"""Every scheme of the coordinator against OpenSees' own implementation of it (openseespy as the oracle).

The five-story shear building of examples/shear_building.toml (El Centro at 0.2 g, 2 % Rayleigh damping),
run through the coordinator with five linear modules and in OpenSees with the matching integrator
(``hybridsim.coordinator.problems.integrators.opensees``): the same equations on a linear structure,
so the floor displacements agree to round-off.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.model import rayleigh_coefficients
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES
from hybridsim.coordinator.problems.integrators.opensees import shear_building

LINEAR = "Linear"
NEWTON = ("Newton", "-initial")
CASES = {
    # kind, options: OpenSees' integrator command, its algorithm and convergence test
    "kr-alpha(0.5)": ("kr-alpha", {"rho_inf": 0.5}, ("KRAlphaExplicit", 0.5), (LINEAR,), ()),
    "kr-alpha(0)": ("kr-alpha", {"rho_inf": 0.0}, ("KRAlphaExplicit", 0.0), (LINEAR,), ()),
    "cr": ("cr", {}, ("KRAlphaExplicit", 1.0), (LINEAR,), ()),
    "generalized-alpha-os(0.5)": ("generalized-alpha-os", {"rho_inf": 0.5}, ("AlphaOSGeneralized", 0.5),
                                  (LINEAR,), ()),
    "generalized-alpha-os(1)": ("generalized-alpha-os", {"rho_inf": 1.0}, ("AlphaOSGeneralized", 1.0), (LINEAR,), ()),
    "hht-explicit(0)": ("hht-explicit", {}, ("HHTExplicit", 1.0), (LINEAR,), ()),
    "hht-explicit(-0.1, 0.7)": ("hht-explicit", {"alpha": -0.1, "gamma": 0.7}, ("HHTExplicit", 0.9, 0.7),
                                (LINEAR,), ()),
    "newmark-explicit(0.6)": ("newmark-explicit", {"gamma": 0.6}, ("NewmarkExplicit", 0.6), (LINEAR,), ()),
    "hht-fixed-iterations(0.5, 3)": ("hht-fixed-iterations", {"rho_inf": 0.5, "iterations": 3},
                                     ("HHTHSFixedNumIter", 0.5), NEWTON, ("FixedNumIter", 3)),
    "hht-fixed-iterations(0.8, 1, order 3)": ("hht-fixed-iterations",
                                              {"rho_inf": 0.8, "iterations": 1, "poly_order": 3},
                                              ("HHTHSFixedNumIter", 0.8, "-polyOrder", 3), NEWTON, ("FixedNumIter", 1)),
    "newmark-fixed-iterations(4, order 1)": ("newmark-fixed-iterations", {"iterations": 4, "poly_order": 1},
                                             ("NewmarkHSFixedNumIter", 0.5, 0.25, "-polyOrder", 1), NEWTON,
                                             ("FixedNumIter", 4)),
}


def run_both(tmp_path, kind, options, integrator, algorithm, test):
    experiment = load_experiment(EXAMPLES / "shear_building.toml")
    experiment = dataclasses.replace(experiment, integrator=kind, integrator_options=options)
    result = run_experiment(experiment, output=tmp_path / "run.h5")
    record = experiment.motion
    reference = shear_building(record.dt, record.acceleration, experiment.dt, experiment.steps, integrator,
                               rayleigh_coefficients(5.6927, 26.1946, 0.02), algorithm=algorithm, test=test)
    return result.displacement, reference


@pytest.mark.parametrize("case", list(CASES))
def test_scheme_matches_opensees_on_the_linear_five_story_building(tmp_path, case):
    ours, reference = run_both(tmp_path, *CASES[case])
    difference = np.max(np.abs(ours - reference)) / np.max(np.abs(reference))
    print(f"{case}: max relative difference to OpenSees {difference:.2e}")
    assert np.max(np.abs(reference)) > 0.05  # a real response (about 0.1 m at the roof)
    assert difference < 1e-8


def test_on_a_yielding_building_unweighted_schemes_agree_and_weighted_ones_converge_to_opensees():
    """Five stories yielding at 1 cm (``problems.integrators.yielding``): central difference evaluates the same
    point as OpenSees (round-off); KR-alpha's forces are weighted where OpenSees weights the displacement, a
    difference of the yielding between two steps, which shrinks with dt faster than dt."""
    from hybridsim.coordinator.problems.integrators.yielding import compare

    same, weighted = compare(["central-difference", "kr-alpha(0.5)"])
    print(f"yielding: central difference {same.difference}, KR-alpha(0.5) {weighted.difference}")
    assert same.peak_drift > 2 * 0.01 and weighted.peak_drift > 2 * 0.01  # well past the 1 cm yield drift
    assert max(same.difference) < 1e-8
    assert 1e-4 < weighted.difference[0] < 1e-2
    assert weighted.difference[1] < weighted.difference[0] / 3
