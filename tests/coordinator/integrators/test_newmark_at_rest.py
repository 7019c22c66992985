"""Newmark implicit keeps converging when a yielded structure comes to rest with a permanent offset.

At rest every force term of the residual vanishes while 1/(beta dt^2) turns the rounding of d into
force: with a relative test alone this 1-DOF run stopped at step 41,993 ("relative residual 1.1e-10 >
1e-10", issue 17).  The bilinear spring here is written out (kinematic hardening, return mapping),
independent of the project's spring module.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.integrators.newmark import NewmarkImplicitIntegrator
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES, MARTHS_DATA

MASS, STIFFNESS, YIELD, HARDENING = 1000.0, 4.0e5, 0.004, 0.05
DT = 1.0 / 1024


class BilinearSpring:
    """Kinematic-hardening bilinear spring (N, m): elastic stiffness k, yield displacement, hardening ratio."""

    def __init__(self) -> None:
        self.plastic = 0.0  # committed plastic displacement (m)
        self.back = 0.0  # committed back force (N)

    def trial(self, d: float) -> tuple[float, float, float]:
        """(force, plastic, back) at d from the committed state."""
        k, h = STIFFNESS, HARDENING * STIFFNESS / (1 - HARDENING)
        force = k * (d - self.plastic)
        over = abs(force - self.back) - k * YIELD
        if over <= 0:
            return force, self.plastic, self.back
        step = over / (k + h) * np.sign(force - self.back)
        return k * (d - self.plastic - step), self.plastic + step, self.back + h * step


def test_a_yielded_structure_at_rest_converges_for_a_minute_and_keeps_its_offset():
    record = np.loadtxt(MARTHS_DATA / "ground_motion_elcentro.csv", delimiter=",", skiprows=1)
    steps = int((record[-1, 0] + 20.0) / DT)
    ground = 0.6 * np.interp(np.arange(steps + 1) * DT, record[:, 0], record[:, 1], right=0.0)
    damping = 0.3 * MASS + 1e-4 * STIFFNESS
    integrator = NewmarkImplicitIntegrator(np.array([[MASS]]), np.array([[damping]]), np.array([[STIFFNESS]]), DT)
    integrator.start(np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1))
    spring = BilinearSpring()
    history = np.zeros(steps + 1)
    for n in range(1, steps + 1):
        trial = integrator.predict(np.array([-MASS * ground[n]]))
        while trial is not None:
            force, plastic, back = spring.trial(float(trial[0]))
            trial = integrator.correct(np.array([force]))
        spring.plastic, spring.back = plastic, back
        history[n] = integrator.displacement[0]
    assert np.max(np.abs(history)) > 2 * YIELD  # it yielded
    offset = spring.plastic
    assert abs(offset) > 1e-4  # and kept a permanent offset
    # the last 10 s: elastic free vibration about the offset (zero spring force at d = plastic), its
    # amplitude decaying as exp(-c t / 2m) (average acceleration adds no numerical damping)
    half = int(5.0 / DT)
    early, late = (np.max(np.abs(history[-k * half:len(history) - (k - 1) * half] - offset)) for k in (2, 1))
    np.testing.assert_allclose(late / early, np.exp(-damping / (2 * MASS) * 5.0), rtol=0.02)
    assert integrator.iterations_max <= 25


def test_the_steel01_frame_at_rest_takes_one_module_evaluation_per_step(tmp_path):
    """The shipped Steel01 frame (three OpenSees sites, a force-based fiber column) in its record's first
    steps, where the ground is still (El Centro here begins with 5 s of zeros): displacements of order
    1e-41 m, below what the force-based element resolves with its own iterations, so the relative residual
    test alone takes several evaluations per step; the correction test ends each step at its first trial."""
    experiment = load_experiment(EXAMPLES / "opensees_frame_hybrid_steel01.toml")
    still = dataclasses.replace(experiment.motion, acceleration=experiment.motion.acceleration[:31])
    assert not np.any(still.acceleration)

    def evaluations(**options) -> dict:
        run = dataclasses.replace(experiment, motion=still, integrator="newmark", integrator_options=options)
        return run_experiment(run, output=tmp_path / "still.h5", overwrite=True).summary["module_evaluations"]

    assert evaluations() == {"per_step": 1.0, "max_in_a_step": 1}
    assert evaluations(displacement_tolerance=0.0)["per_step"] > 2
