"""alpha-OS of the coordinator against OpenSees' own AlphaOS integrator (openseespy as the oracle).

The five-story shear building of examples/shear_building.toml (100 kg, 40 kN/m per story, 2 % Rayleigh
damping, El Centro at 0.2 g) is built in OpenSees (``hybridsim.coordinator.problems.integrators.opensees``) and run with
``integrator AlphaOS (1 + alpha)`` (OpenSees weights by alpha_OS = 1 + alpha, in [2/3, 1]) at the same
dt and record.  For a linear structure both must agree to round-off.
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


@pytest.mark.parametrize("alpha", [-0.05, -1 / 3])
def test_alpha_os_matches_opensees_alphaos_on_the_five_story_building(tmp_path, alpha):
    experiment = load_experiment(EXAMPLES / "shear_building.toml")
    experiment = dataclasses.replace(experiment, integrator_options={"alpha": alpha})
    result = run_experiment(experiment, output=tmp_path / "run.h5")
    # the same record, unresampled, for OpenSees (its Path series interpolates linearly, as we do)
    record = experiment.motion
    reference = shear_building(record.dt, record.acceleration, experiment.dt, experiment.steps,
                               ("AlphaOS", 1.0 + alpha), rayleigh_coefficients(5.6927, 26.1946, 0.02))
    difference = np.max(np.abs(result.displacement - reference)) / np.max(np.abs(reference))
    print(f"alpha = {alpha}: max relative difference to OpenSees AlphaOS {difference:.2e}")
    assert difference < 1e-8
    assert np.max(np.abs(reference)) > 0.05  # a real response (about 0.1 m at the roof), not a trivial zero
