"""Tangent updating in the iterated schemes: a yielding structure under `newmark` converges in fewer module
evaluations per step with Broyden's (or BFGS's) secant updates than with the pre-test stiffness alone, and
reaches the same response (the convergence test is the same)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.integrators.tangent import Tangent
from hybridsim.coordinator.motion import read_motion
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.shipped import resolve
from tests.conftest import EXAMPLES
from tests.coordinator.integrators.test_schemes_with_modules import spring_experiment


def test_the_safeguards_skip_tiny_increments_and_broken_curvature():
    k = np.array([[2.0, -1.0], [-1.0, 2.0]])
    bfgs = Tangent(k, "bfgs", min_increment=1e-9)
    assert not bfgs.update(np.array([1e-10, 0.0]), np.array([1.0, 0.0]))  # below the resolution
    assert not bfgs.update(np.array([1e-3, 0.0]), np.array([-1.0, 0.0]))  # dr.dd < 0: curvature broken
    assert bfgs.update(np.array([1e-3, 0.0]), np.array([1.5e-3, -1e-3]))
    np.testing.assert_allclose(bfgs.matrix @ [1e-3, 0.0], [1.5e-3, -1e-3])  # the secant condition
    broyden = Tangent(k, "broyden", min_increment=1e-9)
    assert not broyden.update(np.array([1e-3, 0.0]), np.array([-5e-3, 0.0]))  # would not be positive definite
    assert (bfgs.skipped, broyden.skipped) == (2, 1)


def evaluations(result) -> dict:
    return result.summary["module_evaluations"]


@pytest.mark.parametrize("tangent", ["broyden", "bfgs"])
def test_a_yielding_spring_takes_fewer_evaluations_with_secant_updates(tmp_path, tangent):
    initial = run_experiment(spring_experiment(tmp_path, "initial", {"kind": "newmark"}))
    updated = run_experiment(spring_experiment(tmp_path, tangent, {"kind": "newmark", "tangent": tangent}))
    before, after = evaluations(initial)["per_step"], evaluations(updated)["per_step"]
    print(f"{tangent}: {after:.4f} module evaluations per step, initial stiffness {before:.4f}")
    assert after < before
    assert np.max(np.abs(updated.displacement - initial.displacement)) < 1e-8 * np.max(np.abs(initial.displacement))


@pytest.mark.long
def test_the_yielding_opensees_frame_takes_fewer_evaluations_with_broyden(tmp_path):
    """The Steel01 frame (three OpenSees site daemons, a yielding fiber column) under El Centro at full scale,
    its first 9 s at dt = 2.5 ms."""
    experiment = load_experiment(EXAMPLES / "opensees_frame_hybrid_steel01.toml")
    motion = read_motion(resolve("hybridsim:marths/ground_motion_elcentro.csv", EXAMPLES)).resampled(0.0025, 9.0)
    runs = {}
    for tangent in ("initial", "broyden"):
        run = dataclasses.replace(experiment, dt=0.0025, motion=motion, integrator="newmark",
                                  integrator_options={"tangent": tangent})
        runs[tangent] = run_experiment(run, output=tmp_path / f"{tangent}.h5")
    before, after = (evaluations(runs[t])["per_step"] for t in ("initial", "broyden"))
    print(f"Steel01 frame: broyden {after:.4f}, initial {before:.4f} module evaluations per step")
    assert after < before
