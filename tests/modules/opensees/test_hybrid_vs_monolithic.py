"""Hybrid equals monolithic (the UI-SIMCOR verification) on the maRTHS frame, with OpenSees as the oracle.

The hybrid: examples/opensees_frame_hybrid.toml, stories 2-3 and the first
story's outer bays as two OpenSees site daemons, the physical portal as a
linear module (stiffness from the identification of K_matrix.csv), integrated
by the coordinator's alpha-OS over 19 DOFs.  The monolithic: the whole frame
file under OpenSees' AlphaOS (Linear -initial), same dt, alpha and record.

Linear: equal to round-off of the model (the portal's stiffness comes from
the data, the monolithic's from the rounded AISC sections: 1e-7).  With
column 3-7 yielding (Steel01 fibers, El Centro at full scale, the top section
reaches 2.5 times the yield strain), the two schemes differ at O(dt): OpenSees
evaluates and commits its elements at the interpolated predictor
(1 + alpha) d~_{n+1} - alpha d~_n, alpha-OS evaluates the modules at d~_{n+1}
and weights their forces; and the modules bring their internal massless DOFs
(rotations of floors 2-3, the portal's pinned bases) to equilibrium by Newton
in every step, where AlphaOS splits them like all others.  Halving dt halves
the difference.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.opensees.models import marths_frame
from hybridsim.modules.opensees.monolithic import alpha_os_response
from tests.conftest import EXAMPLES

RAYLEIGH_MASS = (1.247372, 0.0)  # as in the examples: the mass-proportional part of the benchmark's damping


def hybrid_and_monolithic(tmp_path: Path, example: str, dt: float, duration: float,
                          parameters: dict) -> tuple[np.ndarray, np.ndarray, list[str]]:
    table = tomllib.loads((EXAMPLES / example).read_text())
    table["experiment"].update(dt=dt, duration=duration)
    experiment = parse_experiment(table, base_dir=EXAMPLES)
    hybrid = run_experiment(experiment, output=tmp_path / f"{example}.{dt}.h5")
    record = marths_frame.control_nodes(experiment.dofs)
    monolithic = alpha_os_response(Path(marths_frame.__file__), parameters, dt=dt,
                                   ground_acceleration=experiment.motion.acceleration,
                                   alpha=experiment.integrator_options["alpha"], record=record, rayleigh=RAYLEIGH_MASS)
    return hybrid.displacement, monolithic, list(experiment.dofs)


def relative_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """max_t |a - b| / max_t |b|, per DOF."""
    return np.max(np.abs(a - b), axis=0) / np.max(np.abs(b), axis=0)


def test_linear_hybrid_equals_monolithic_alphaos(tmp_path) -> None:
    hybrid, monolithic, dofs = hybrid_and_monolithic(tmp_path, "opensees_frame_hybrid.toml", 0.01, 10.0, {})
    difference = relative_difference(hybrid, monolithic)
    print(f"linear: max relative difference {difference.max():.2e}")
    assert difference.max() < 1e-6
    assert np.max(np.abs(monolithic[:, dofs.index("floor1.x")])) > 3e-3  # El Centro 0.4: about 4 mm


def test_yielding_portal_differs_at_the_order_of_the_time_step(tmp_path) -> None:
    steel = {"bay_columns": "steel01", "fy": 250e6, "hardening": 0.02}
    floors = slice(0, 3)
    differences = []
    for dt in (0.01, 0.005):
        hybrid, monolithic, dofs = hybrid_and_monolithic(tmp_path, "opensees_frame_hybrid_steel01.toml", dt, 10.0,
                                                         steel)
        assert dofs[floors] == ["floor1.x", "floor2.x", "floor3.x"]
        differences.append(relative_difference(hybrid, monolithic)[floors].max())
    print(f"Steel01 portal: floor displacements differ by {differences[0]:.2e} (dt 0.01 s), "
          f"{differences[1]:.2e} (dt 0.005 s)")
    assert 1e-6 < differences[0] < 3e-4          # a real difference (not round-off), and a small one
    assert differences[1] < 0.6 * differences[0]  # first order in dt: a difference of schemes, not of models
