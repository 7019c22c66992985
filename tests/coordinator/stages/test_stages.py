"""A test program's stages against OpenSees: a quasi-static FEMA 461 protocol on a Steel01 spring (the hysteresis
against OpenSees' own Steel01 under the same displacements), a gravity stage then a transient (against one
OpenSees model with ``loadConst -time 0.0``), a resume inside a stage, and the protocols' ladders from their
definitions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_checkpoint, read_results
from hybridsim.coordinator.simulation import resume_run, run_experiment
from hybridsim.coordinator.stages.protocols import amplitudes_of, protocol_history
from tests.coordinator.integrity.test_energy import steel01_forces
from tests.coordinator.test_resume import aborted_at
from tests.modules.opensees.test_force_control import DT, MASS, MODEL, P, RAYLEIGH_A, _monolithic, _record

MODELS = Path(__file__).parents[2] / "modules" / "opensees" / "models"
FY, E0, B = 100.0, 1000.0, 0.1
"""N, N/m: the Steel01 spring of models/springs.py; it yields at FY / E0 = 0.1 m"""
PROTOCOL = {"ladder": "fema-461", "yield_displacement": FY / E0, "last": 6.0, "steps_per_cycle": 20}


def test_the_fema_461_and_atc_24_ladders_follow_their_definitions():
    amplitudes, cycles = amplitudes_of(PROTOCOL)
    # FEMA 461 section 2.9: a_{i+1} = 1.4 a_i, two cycles each, the target (6 dy) after ten amplitudes
    assert np.allclose(amplitudes[1:] / amplitudes[:-1], 1.4, rtol=1e-14) and amplitudes[-1] == 6.0
    assert amplitudes.size == 10 and np.all(cycles == 2) and amplitudes[0] == pytest.approx(6.0 / 1.4 ** 9)
    history = protocol_history(PROTOCOL)
    assert history.size == 10 * 2 * 20 and history[-1] == 0.0
    peaks = history[4::20]  # a cycle's positive peak is its fifth step of twenty
    assert np.allclose(peaks, np.repeat(amplitudes, 2) * FY / E0, rtol=1e-14)
    assert np.allclose(history[14::20], -peaks, rtol=1e-14)
    atc, atc_cycles = amplitudes_of({"ladder": "atc-24", "yield_displacement": 1.0, "last": 6.0})
    assert atc.tolist() == [0.5, 1, 2, 3, 4, 5, 6] and atc_cycles.tolist() == [6, 3, 3, 3, 2, 2, 2]


def spring_program(tmp_path: Path, name: str, checkpoint_every: int = 0) -> dict:
    config = {"model": "springs.py", "parameters": {"case": "steel01", "fy": FY, "e0": E0, "b": B},
              "control": [{"name": "x", "node": 2, "dof": 1}]}
    return {"experiment": {"name": name, "dt": 0.01},
            "structure": {"dofs": ["x"], "mass_diagonal": [1.0]},
            "stages": [{"kind": "quasi-static", "name": "cyclic", "dof": "x", "protocol": PROTOCOL}],
            "modules": [{"name": "spring", "kind": "opensees", "config": config}],
            "output": {"file": str(tmp_path / f"{name}.h5"), "checkpoint_every": checkpoint_every}}


@pytest.fixture(scope="module")
def cyclic(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("cyclic")
    result = run_experiment(parse_experiment(spring_program(tmp_path, "whole"), base_dir=MODELS))
    return tmp_path, result


def test_a_quasi_static_fema_461_test_of_a_steel01_spring_equals_opensees_steel01(cyclic):
    _, result = cyclic
    history = protocol_history(PROTOCOL)
    displacement, force = result.displacement[:, 0], result.restoring_force[:, 0]
    assert np.array_equal(displacement[1:], history)  # the protocol imposed as it is
    reference = steel01_forces(displacement[1:], FY, E0, B)  # OpenSees' Steel01, each step committed (N)
    max_rel_diff = np.max(np.abs(force[1:] - reference)) / np.max(np.abs(reference))
    print(f"FEMA 461 on Steel01: max_rel_diff {max_rel_diff:.2e}, peak force {np.max(np.abs(reference)):.1f} N")
    assert max_rel_diff < 1e-9
    assert np.max(np.abs(reference)) > 1.4 * FY  # it yields and hardens (b = 0.1 past 6 dy)
    stored = read_results(result.output)
    assert np.all(stored["stage"] == np.r_[0, np.zeros(history.size)])
    assert result.summary["stages"] == [{"name": "cyclic", "kind": "quasi-static", "first_row": 1,
                                         "rows": history.size}]


def test_a_run_stopped_inside_a_quasi_static_stage_resumes_to_the_uninterrupted_one(cyclic):
    tmp_path, whole = cyclic
    control, listener = aborted_at(230)
    with pytest.raises(RunStopped):
        run_experiment(parse_experiment(spring_program(tmp_path, "broken", 100), base_dir=MODELS), control=control,
                       listeners=[listener])
    assert read_checkpoint(tmp_path / "broken.h5").step == 200
    resumed = resume_run(tmp_path / "broken.h5")
    np.testing.assert_array_equal(resumed.restoring_force, whole.restoring_force)


def gravity_then_shaking(tmp_path: Path, name: str, checkpoint_every: int = 0) -> dict:
    config = {"model": MODEL.name, "path_independent": True, "parameters": {"transformation": "PDelta"},
              "control": [{"name": "x", "node": 2, "dof": 1}, {"name": "y", "node": 2, "dof": 2}]}
    return {"experiment": {"name": "gravity-then-shaking", "dt": DT},
            "structure": {"dofs": ["x", "y"], "mass_diagonal": [MASS, 0.0],
                          "damping": {"rayleigh": [RAYLEIGH_A, 0.0]}, "influence": [1.0, 0.0]},
            "ground_motion": {"file": str(tmp_path / "pulse.csv")},
            "stages": [{"kind": "static", "name": "gravity", "forces": {"y": -P}, "increments": 10},
                       {"kind": "dynamic", "name": "shaking"}],
            "integrator": {"kind": "newmark", "tolerance": 1e-12},
            "modules": [{"name": "column", "kind": "opensees", "config": config}],
            "output": {"file": str(tmp_path / f"{name}.h5"), "checkpoint_every": checkpoint_every}}


def test_a_gravity_stage_then_a_dynamic_stage_equal_one_opensees_model_with_load_const(tmp_path):
    ground = _record(tmp_path)
    result = run_experiment(parse_experiment(gravity_then_shaking(tmp_path, "staged"), base_dir=MODEL.parent))
    hybrid = result.displacement[10:, 0]  # from the gravity stage's last row, the transient's rest state
    monolithic = _monolithic(ground, "PDelta", P)
    without_gravity = _monolithic(ground, "PDelta", 0.0)
    peak = np.abs(monolithic).max()
    max_rel_diff = np.abs(hybrid - monolithic).max() / peak
    print(f"gravity stage then transient vs OpenSees loadConst: max_rel_diff {max_rel_diff:.2e}")
    assert max_rel_diff < 1e-6
    assert np.abs(without_gravity - monolithic).max() > 0.05 * peak  # the held gravity load matters (P-Delta)
    stored = read_results(result.output)
    assert stored["time"][10] == 1.0 and stored["time"][11] == DT  # the load factor, then the transient's time
    # the gravity stays on: the axial shortening P L / (E A) at the end of the stage and through the transient
    assert stored["displacement"][10, 1] == pytest.approx(-P * 3.0 / (200e9 * 0.01), rel=1e-9)


def test_a_static_stage_that_does_not_converge_stops_the_run_in_one_line(tmp_path):
    # a linear spring k under F with a declared tangent k/10: the iteration d <- d + 10 (F - k d)/k multiplies the
    # error by -9 each time, so it never converges
    k, force = 1.0e4, 100.0
    table = {"experiment": {"name": "soft-tangent", "dt": 0.01},
             "structure": {"dofs": ["x"], "mass_diagonal": [1.0]},
             "stages": [{"kind": "static", "forces": {"x": force}, "increments": 1, "tangent": [[k / 10]],
                         "max_iterations": 5}],
             "modules": [{"name": "spring", "kind": "linear", "config": {"dofs": ["x"], "stiffness": [[k]]}}],
             "output": {"file": str(tmp_path / "soft.h5")}}
    with pytest.raises(RunStopped, match=r"^row 1: static stage 'static-1', increment 1 of 1: no static equilibrium "
                                         r"after 5 iterations \(residual [0-9.e+]+ N\); use more increments"):
        run_experiment(parse_experiment(table, base_dir=tmp_path))
    table["stages"][0].pop("tangent")  # the pre-test's K_I: exact for a linear spring, one correction
    result = run_experiment(parse_experiment(table, base_dir=tmp_path), overwrite=True)
    assert result.displacement[-1, 0] == pytest.approx(force / k, rel=1e-12)


def linear_spring(tmp_path: Path, stages: list, integrator: str = "newmark") -> dict:
    return {"experiment": {"name": "spring", "dt": 0.01},
            "structure": {"dofs": ["x"], "mass_diagonal": [MASS_1]},
            "stages": stages, "integrator": {"kind": integrator, "tolerance": 1e-13},
            "modules": [{"name": "spring", "kind": "linear", "config": {"dofs": ["x"], "stiffness": [[K_1]]}}],
            "output": {"file": str(tmp_path / "spring.h5")}}


MASS_1, K_1, U0 = 100.0, 4.0e4, 0.02
"""kg, N/m, m: omega = 20 rad/s"""


def test_free_vibration_from_a_static_displacement_follows_the_trapezoidal_rules_closed_form(tmp_path):
    # pulled to u0 by a static stage, then released: the trapezoidal rule (Newmark's average acceleration) gives
    # exactly u_n = u0 cos(n theta), theta = 2 atan(omega dt / 2) (its amplification is the Cayley transform)
    stages = [{"kind": "static", "displacements": {"x": U0}, "increments": 1},
              {"kind": "free-vibration", "duration": 1.0}]
    result = run_experiment(parse_experiment(linear_spring(tmp_path, stages), base_dir=tmp_path))
    theta = 2 * np.arctan(np.sqrt(K_1 / MASS_1) * 0.01 / 2)
    free = result.displacement[1:, 0]
    np.testing.assert_allclose(free, U0 * np.cos(theta * np.arange(free.size)), rtol=0, atol=1e-10 * U0)
    assert read_results(result.output)["time"][2] == pytest.approx(0.01)  # from 0 after a static stage


def test_a_force_controlled_quasi_static_history_reaches_f_over_k(tmp_path):
    forces = [100.0, -250.0, 50.0]
    stages = [{"kind": "quasi-static", "dof": "x", "control": "force", "values": forces}]
    result = run_experiment(parse_experiment(linear_spring(tmp_path, stages), base_dir=tmp_path))
    np.testing.assert_allclose(result.displacement[1:, 0], np.array(forces) / K_1, rtol=1e-12)


def test_the_printed_summary_names_the_stages_and_each_components_peak():
    from hybridsim.coordinator.cli.run import _program_lines

    summary = {"stages": [{"name": "gravity", "kind": "static", "first_row": 1, "rows": 10},
                          {"name": "shaking", "kind": "dynamic", "first_row": 11, "rows": 300}],
               "excitation": {"H1": {"peak": 3.13, "unit": "m/s^2", "time_s": 2.5, "start_s": 0.0},
                              "H2": {"peak": 2.5, "unit": "m/s^2", "time_s": 3.5, "start_s": 1.0}}}
    assert _program_lines(summary) == [
        "stages: gravity (static, rows 1-10), shaking (dynamic, rows 11-310)",
        "excitation: H1 peak 3.13 m/s^2 = 0.319 g at 2.5 s, H2 peak 2.5 m/s^2 = 0.255 g at 3.5 s (from 1 s)"]


def test_the_shipped_test_program_runs_its_four_stages(tmp_path):
    from hybridsim.coordinator.experiment import load_experiment
    from tests.conftest import EXAMPLES

    result = run_experiment(load_experiment(EXAMPLES / "test_program.toml"), output=tmp_path / "program.h5")
    stages = {s["name"]: s for s in result.summary["stages"]}
    assert list(stages) == ["cyclic-before", "earthquake", "decay", "cyclic-after"]
    assert stages["earthquake"]["rows"] == 2000 and stages["decay"]["rows"] == 500
    # the last cycle's positive peak (6 dy = 0.12 m) lies on the kinematic-hardening bound alpha k d + (1 - alpha) f_y
    k, alpha, dy = 39478.417604357434, 0.05, 0.02
    peak = stages["cyclic-after"]["first_row"] + stages["cyclic-after"]["rows"] - 1 - 15  # 5 steps past 0 of 20
    assert result.displacement[peak, 0] == pytest.approx(6 * dy, rel=1e-12)
    assert result.restoring_force[peak, 0] == pytest.approx(alpha * k * 6 * dy + (1 - alpha) * k * dy, rel=1e-9)
    assert result.summary["simulated_s"] == pytest.approx(25.0)  # the earthquake's 20 s and the decay's 5 s
    from hybridsim.coordinator.export import export

    table = np.loadtxt(export(result.output, tmp_path / "program.csv"), delimiter=",", skiprows=1)
    assert (tmp_path / "program.csv").read_text().startswith("time [s],stage [1],ground_acceleration")
    assert np.array_equal(table[:, 1], np.repeat([0.0, 0, 1, 2, 3], [1, 400, 2000, 500, 400]))


def test_a_run_stopped_inside_the_dynamic_stage_after_gravity_resumes_to_the_uninterrupted_one(tmp_path):
    _record(tmp_path)
    whole = run_experiment(parse_experiment(gravity_then_shaking(tmp_path, "whole"), base_dir=MODEL.parent))
    control, listener = aborted_at(150)
    with pytest.raises(RunStopped):
        run_experiment(parse_experiment(gravity_then_shaking(tmp_path, "broken", 100), base_dir=MODEL.parent),
                       control=control, listeners=[listener])
    assert read_checkpoint(tmp_path / "broken.h5").step == 100  # inside the transient (rows 11-310), gravity held
    resumed = resume_run(tmp_path / "broken.h5")
    np.testing.assert_array_equal(resumed.displacement, whole.displacement)


def test_a_quasi_static_ladder_through_an_experimental_site_and_its_virtual_lab(tmp_path):
    """examples/setups/one_actuator_site.toml (a bilinear column behind a lagging actuator, five control samples a
    step): every row is one step of the site's clock, so the ladder moves the actuator as a dynamic step would;
    at each peak the measured force is the specimen's law within its load cells' noise (sigma 5 N: 5 sigma)."""
    from tests.conftest import EXAMPLES

    k, dy, alpha = 4.0e5, 0.008, 0.05
    protocol = {"ladder": "custom", "yield_displacement": dy, "amplitudes": [0.5, 1.0, 2.0], "cycles": 1,
                "steps_per_cycle": 40}
    table = {"experiment": {"name": "lab-cyclic", "dt": 0.005}, "structure": {"dofs": ["x"], "mass_diagonal": [1e3]},
             "stages": [{"kind": "quasi-static", "dof": "x", "protocol": protocol}],
             "modules": [{"name": "column", "kind": "experimental", "config_file": "one_actuator_site.toml"}],
             "output": {"file": str(tmp_path / "lab.h5")}}
    result = run_experiment(parse_experiment(table, base_dir=EXAMPLES / "setups"))
    peaks = np.arange(10, 120, 20)  # a cycle's peaks at its 10th and 30th step of 40
    d, r = result.displacement[peaks, 0], result.restoring_force[peaks, 0]
    law = np.where(np.abs(d) <= dy, k * d, np.sign(d) * (k * dy + alpha * k * (np.abs(d) - dy)))
    assert np.allclose(d, dy * np.array([0.5, -0.5, 1.0, -1.0, 2.0, -2.0]), rtol=1e-12)
    assert np.max(np.abs(r - law)) < 25.0


def test_a_displacement_and_a_force_history_side_by_side_meet_their_closed_form(tmp_path):
    # two springs in series (k1 to the ground, k2 between x1 and x2): x2 imposed, F at x1, so
    # x1 = (F + k2 x2) / (k1 + k2) and the reaction at x2 is k2 (x2 - x1)
    k1, k2 = 3.0e4, 1.0e4
    x2, force = np.array([0.01, -0.02, 0.005]), np.array([100.0, 300.0, -50.0])
    table = {"experiment": {"name": "mixed", "dt": 0.01}, "structure": {"dofs": ["x1", "x2"], "mass_diagonal": [1, 1]},
             "stages": [{"kind": "quasi-static", "histories": [{"dof": "x2", "values": x2.tolist()},
                                                               {"dof": "x1", "control": "force",
                                                                "values": force.tolist()}]}],
             "modules": [{"name": "springs", "kind": "linear",
                          "config": {"dofs": ["x1", "x2"], "stiffness": [[k1 + k2, -k2], [-k2, k2]]}}],
             "output": {"file": str(tmp_path / "mixed.h5")}}
    result = run_experiment(parse_experiment(table, base_dir=tmp_path))
    x1 = (force + k2 * x2) / (k1 + k2)
    np.testing.assert_allclose(result.displacement[1:], np.column_stack([x1, x2]), rtol=1e-12)
    np.testing.assert_allclose(result.restoring_force[1:, 1], k2 * (x2 - x1), rtol=1e-9)
