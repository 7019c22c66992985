"""The maRTHS frame split into three linear modules equals the monolithic model (UI-SIMCOR verification).

Also checks the monolithic frame against the benchmark's own deterministic checkpoints (maRTHS SPEC 17.2:
reference structure, El Centro 0.4, Newmark average acceleration at 1024 Hz), an oracle independent of
this code: peak first-floor displacement -3.99171 mm at 7.711914 s, -1.49113663 mm at tick 10240.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES


def shortened(name: str, duration: float, **changes):
    experiment = load_experiment(EXAMPLES / name)
    motion = dataclasses.replace(experiment.motion,
                                 acceleration=experiment.motion.acceleration[: round(duration / experiment.dt) + 1])
    return dataclasses.replace(experiment, motion=motion, **changes)


def test_three_linear_modules_give_the_monolithic_response(tmp_path):
    split = run_experiment(shortened("frame_three_linear.toml", 10.0), output=tmp_path / "split.h5")
    whole = run_experiment(shortened("frame_monolithic.toml", 10.0), output=tmp_path / "whole.h5")
    scale = np.max(np.abs(whole.displacement), axis=0)
    assert np.max(np.abs(split.displacement - whole.displacement) / scale) < 1e-9
    np.testing.assert_allclose(split.initial_stiffness, whole.initial_stiffness, rtol=0, atol=1e-6 * np.max(
        np.abs(whole.initial_stiffness)))
    # the results file holds every step and names the modules
    stored = read_results(tmp_path / "split.h5")
    assert stored["attrs"]["status"] == "completed"
    assert stored["displacement"].shape == split.displacement.shape
    assert {key.split("/")[1] for key in stored if key.startswith("modules/")} == {"story1", "story2", "story3"}


def test_monolithic_newmark_reproduces_the_benchmark_reference_checkpoints(tmp_path):
    experiment = shortened("frame_monolithic.toml", 10.0, integrator="newmark", integrator_options={})
    result = run_experiment(experiment, output=tmp_path / "newmark.h5")
    x = result["floor1_x"]
    assert x[10240] * 1e3 == pytest.approx(-1.49113663, rel=1e-6)
    assert result["J7_ry"][10240] == pytest.approx(-0.00378446779, rel=1e-6)  # rRef = -U21 (frame sign)
    peak = np.argmax(np.abs(x))
    assert x[peak] * 1e3 == pytest.approx(-3.99171, rel=1e-5)
    assert result.time[peak] == pytest.approx(7.711914, abs=1e-6)


def test_guyan_condensation_of_the_massless_rotations_is_exact_without_stiffness_damping(tmp_path):
    """With mass-proportional damping only, the 14 massless rotations are in static equilibrium at every
    step of the full Newmark solution, so integrating the 15 DOFs with mass and recovering the rotations
    by Guyan condensation gives the same response to round-off."""
    from hybridsim.coordinator.experiment import DampingSpec

    damping = DampingSpec(rayleigh=(1.247372, 0.0))
    common = dict(integrator="newmark", integrator_options={}, damping=damping)
    full = run_experiment(shortened("frame_monolithic.toml", 8.0, **common), output=tmp_path / "full.h5")
    condensed = run_experiment(shortened("frame_monolithic.toml", 8.0, condense_massless=True, **common),
                               output=tmp_path / "condensed.h5")
    scale = np.max(np.abs(full.displacement), axis=0)
    assert np.max(np.abs(condensed.displacement - full.displacement) / scale) < 1e-8


def test_central_difference_runs_the_condensed_frame_and_agrees_with_alpha_os(tmp_path):
    """Explicit integration needs mass at every DOF: it refuses the full frame and runs the condensed one;
    at dt = 1/1024 s (omega_max dt = 0.19 for the condensed frame) it agrees with alpha-OS to ~1e-3."""
    from hybridsim.coordinator.errors import UsageError

    with pytest.raises(UsageError, match="explicit scheme needs mass at every DOF"):
        run_experiment(shortened("frame_monolithic.toml", 0.1, integrator="central-difference",
                                 integrator_options={}), output=tmp_path / "refused.h5")
    explicit = run_experiment(shortened("frame_monolithic.toml", 10.0, integrator="central-difference",
                                        integrator_options={}, condense_massless=True), output=tmp_path / "cd.h5")
    reference = run_experiment(shortened("frame_monolithic.toml", 10.0, integrator="alpha-os",
                                         integrator_options={"alpha": 0.0}), output=tmp_path / "aos.h5")
    x, x_ref = explicit["floor3_x"], reference["floor3_x"]
    assert np.max(np.abs(x - x_ref)) / np.max(np.abs(x_ref)) < 5e-3
