"""The generic experimental site behind the module interface: several control samples per step, the per-actuator
limits, a plant daemon with load cells, the pre-test probe and one-line refusals of a bad site table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hybridsim.coordinator.experiment import ExperimentError, load_experiment
from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import Command, ModuleError, Session

DT = 0.001
SETUP = {"kind": "two-actuators-2d", "lengths": [1.2, 1.0], "height": 0.5}
STIFFNESS = [[4.0e6, -6.0e5], [-6.0e5, 2.0e5]]  # N/m, N, N*m/rad over (x, theta)


def site_config(backend: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    plant = {"dt": DT, "dofs": ["a1", "a2"], "actuators": [{"model": "ideal"}] * 2,
             "specimen": {"kind": "linear", "stiffness": STIFFNESS}}
    return {"dt": DT, "setup": SETUP, "actuators": [{"compensator": {"kind": "none"}}] * 2,
            "backend": backend or {"plant": plant}, **extra}


def drive(module, targets: np.ndarray, dt: float) -> list:
    """Open at ``dt``, commit the rest reading, then one committed step per target; the results."""
    module.open(Session(dt, module.describe().dof_names))
    results = []
    for step, target in enumerate(np.vstack([np.zeros(2), targets])):
        module.propose(step, Command(step * dt, np.asarray(target, float)))
        results.append(module.execute(step))
        module.commit(step)
    return results


TARGETS = np.column_stack([0.004 * np.sin(np.arange(1, 31) * 0.2), 0.01 * np.sin(np.arange(1, 31) * 0.13)])


@pytest.mark.parametrize("samples", [1, 4])
def test_every_step_reads_the_specimen_through_the_setup(samples: int) -> None:
    """Ideal actuators and a linear specimen: r = K d at every step, one or four control samples per step."""
    module = build_module("experimental", site_config())
    assert module.describe().dof_names == ("x", "theta")
    results = drive(module, TARGETS, samples * DT)
    stats = module.close()
    assert stats["committed"] == TARGETS.shape[0] + 1
    for result, target in zip(results[1:], TARGETS):
        np.testing.assert_allclose(result.displacement, target, rtol=0, atol=1e-15)
        np.testing.assert_allclose(result.force, np.array(STIFFNESS) @ target, rtol=1e-12)


def test_the_pre_test_probes_the_specimen_without_moving() -> None:
    module = build_module("experimental", site_config())
    module.open(Session(DT, ("x", "theta")))
    module.propose(0, Command(0.0, np.array([1e-5, 0.0])))
    np.testing.assert_allclose(module.execute(0).force, [40.0, -6.0], rtol=1e-9)
    module.propose(1, Command(0.0, np.zeros(2)))
    np.testing.assert_array_equal(module.execute(1).force, [0.0, 0.0])
    module.close()


def test_a_plant_daemon_with_load_cells_gives_the_in_process_answer() -> None:
    plant = {"dt": DT, "dofs": ["a1", "a2"], "actuators": [{"model": "first-order", "bandwidth": 300.0}] * 2,
             "specimen": {"kind": "linear", "stiffness": STIFFNESS}}
    near = drive(build_module("experimental", site_config({"plant": plant})), TARGETS, DT)
    remote = build_module("experimental", site_config({"daemon": plant}, initial_stiffness=STIFFNESS))
    far = drive(remote, TARGETS, DT)
    remote.close()
    for a, b in zip(near, far):
        np.testing.assert_array_equal(a.force, b.force)
        np.testing.assert_array_equal(a.displacement, b.displacement)
    assert abs(far[-1].displacement[0] - TARGETS[-1, 0]) > 1e-5  # first-order actuators lag


def test_a_stroke_beyond_its_limit_stops_the_site_before_anything_is_sent() -> None:
    config = site_config()
    config["actuators"] = [{"compensator": {"kind": "none"}, "stroke": 0.003}, {"compensator": {"kind": "none"}}]
    module = build_module("experimental", config)
    with pytest.raises(ModuleError, match=r"actuator 1: target stroke 3.\d+ mm beyond its limit 3 mm at sample "
                                          r"\d+; nothing was sent"):
        drive(module, TARGETS, DT)
    module.close()


def test_a_load_beyond_its_limit_stops_the_site() -> None:
    config = site_config()
    config["actuators"] = [{"compensator": {"kind": "none"}}, {"compensator": {"kind": "none"}, "force": 1000.0}]
    module = build_module("experimental", config)
    with pytest.raises(ModuleError, match=r"actuator 2: load cell reads -?\d+(\.\d+)? N, beyond its limit 1000 N"):
        drive(module, TARGETS, DT)
    module.close()


@pytest.mark.parametrize(("change", "message"), [
    ({"setup": {"kind": "two-actuators-2d", "lengths": [1.0, 1.0]}}, "missing key setup.height"),
    ({"actuators": [{"compensator": {"kind": "none"}}]}, "the setup has 2 actuators: give one table per actuator"),
    ({"actuators": [{"compensator": {"kind": "none"}, "stroke_mm": 3}] * 2}, "unknown key actuators[0].stroke_mm; allowed: compensator, force, guard, stroke"),
    ({"dofs": ["x"]}, "dofs must rename the setup's 2 DOFs (x, theta)"),
    ({"setup": None}, "give exactly one of setup or coupler"),
    ({"initial_stiffness": [[1.0]]}, "initial_stiffness must be a finite 2 x 2 matrix"),
])
def test_a_bad_site_table_is_one_line_naming_the_key(change: dict, message: str) -> None:
    config = {k: v for k, v in {**site_config(), **change}.items() if v is not None}
    with pytest.raises(ModuleError) as info:
        module = build_module("experimental", config)
        module.open(Session(DT, module.describe().dof_names))
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(("place", "change", "message"), [
    ("plant", {"actuators": [{"compensator": {"kind": "none"}}] * 3}, "the setup has 2 actuators: give one table per "
                                                                        "actuator (actuators = [...]), not 3"),
    ("plant", {"plant_dt": 2 * DT}, "backend.plant.dt (0.002 s) must be the site's dt (0.001 s)"),
    ("daemon", {"plant_dt": DT / 2}, "backend.daemon.dt (0.0005 s) must be the site's dt (0.001 s)"),
])
def test_a_table_that_cannot_drive_its_rig_is_refused_before_anything_starts(place: str, change: dict,
                                                                               message: str) -> None:
    """Refused when the site is built from its table (what `hybridsim run` validates, exit 2), not at the first
    step: a lab sampled at another dt than the site's would integrate its actuators over the wrong interval."""
    config = site_config()
    plant = config["backend"].pop("plant")
    config["backend"][place] = {**plant, "dt": change.pop("plant_dt", DT)}
    with pytest.raises(ModuleError) as info:
        build_module("experimental", {**config, **change})
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_daemon_control_that_cannot_probe_asks_for_the_initial_stiffness(tmp_path: Path) -> None:
    plant = {"dt": DT, "dofs": ["a1", "a2"], "actuators": [{"model": "ideal"}] * 2,
             "specimen": {"kind": "linear", "stiffness": STIFFNESS}}
    module = build_module("experimental", site_config({"daemon": plant}))
    module.open(Session(DT, ("x", "theta")))
    module.propose(0, Command(0.0, np.array([1e-5, 0.0])))
    with pytest.raises(ModuleError, match="cannot probe the specimen before the test: give initial_stiffness"):
        module.execute(0)
    module.close()


@pytest.mark.parametrize("backend, extra, refused", [
    ("daemon", {}, True),
    ("daemon", {"initial_stiffness": STIFFNESS}, False),
    ("plant", {}, False),
])
def test_a_daemon_control_without_initial_stiffness_is_refused_when_the_experiment_is_read(
        tmp_path: Path, backend: str, extra: dict, refused: bool) -> None:
    """The coordinator's pre-test is the run's first step: refused before the site and its plant daemon start."""
    plant = {"dt": DT, "dofs": ["a1", "a2"], "actuators": [{"model": "ideal"}] * 2,
             "specimen": {"kind": "linear", "stiffness": STIFFNESS}}
    (tmp_path / "site.json").write_text(json.dumps(site_config({backend: plant}, **extra)))
    (tmp_path / "test.toml").write_text(
        '[experiment]\nname = "t"\ndt = 0.005\nduration = 0.1\n'
        '[structure]\ndofs = ["x", "theta"]\nmass_diagonal = [1000.0, 10.0]\ninfluence = [1.0, 0.0]\n'
        '[ground_motion]\nfile = "hybridsim:marths/ground_motion_elcentro.csv"\n'
        '[[modules]]\nname = "lab"\nkind = "experimental"\nconfig_file = "site.json"\naddress = "local"\n')
    if not refused:
        load_experiment(tmp_path / "test.toml")
        return
    with pytest.raises(ExperimentError) as info:
        load_experiment(tmp_path / "test.toml")
    assert str(info.value) == ("module 'lab' (config site.json): this control cannot probe the specimen before the "
                               "test: give initial_stiffness (a DOFs x DOFs matrix) for the pre-test")


def test_a_checkpoint_of_a_site_with_a_yielding_specimen_resumes_exactly() -> None:
    """The site's checkpoint carries the lab's actuators, its specimen's committed state and the compensators."""
    config = site_config()
    config["backend"]["plant"]["specimen"] = {"kind": "spring", "law": "bilinear", "dofs": ["x"], "stiffness": 4.0e6,
                                              "yield_displacement": 0.002, "hardening_ratio": 0.1,
                                              "coordinates": "actuators"}
    config["backend"]["plant"]["actuators"] = [{"model": "first-order", "bandwidth": 300.0}] * 2
    config["backend"]["plant"]["specimen"]["dofs"] = ["a1", "a2"]  # a spring between the two actuators
    first, second = TARGETS[:15], TARGETS[15:]
    module = build_module("experimental", config)
    drive(module, first, DT)
    saved = module.checkpoint()
    straight = []
    for step, target in enumerate(second, start=len(first) + 1):
        module.propose(step, Command(step * DT, target))
        straight.append(module.execute(step))
        module.commit(step)
    module.close()
    resumed = build_module("experimental", config)
    resumed.open(Session(DT, ("x", "theta")))
    resumed.restore(saved)
    for step, (target, expected) in enumerate(zip(second, straight), start=len(first) + 1):
        resumed.propose(step, Command(step * DT, target))
        result = resumed.execute(step)
        resumed.commit(step)
        np.testing.assert_array_equal(result.force, expected.force)
        np.testing.assert_array_equal(result.displacement, expected.displacement)
    assert np.max(np.abs(straight[-1].force)) > 0.0
    resumed.close()


SPREADER = {"kind": "four-actuators-3d", "lengths": [1.5, 1.5, 1.5, 1.5], "heights": [0.3, 0.9, 0.3, 0.9],
            "links": [0.25] * 4, "angle": 45.0, "rods": {"pins": [[0.35, -0.35, 1.2], [-0.35, 0.35, 1.2]],
                                                        "lengths": [3.0, 3.0]}}
HEAD = np.diag([3.0e6, 3.0e6, 4.0e6, 4.0e6])  # N/m, N*m/rad over (ux, uy, rx, ry)


def test_the_rods_hold_their_loads_and_the_actuators_balance_the_specimen_and_them() -> None:
    """Six load cells (four actuators, two rods at 100 kN held by their jacks): the site's J^T f - J_rods^T T is
    the specimen's K q at every step, the rods' columns of the record read 100 kN."""
    plant = {"dt": DT, "dofs": ["a1", "a2", "a3", "a4"], "actuators": [{"model": "ideal"}] * 4,
             "specimen": {"kind": "linear", "stiffness": HEAD.tolist(), "held_loads": [1.0e5, 1.0e5]}}
    config = {"dt": DT, "setup": SPREADER, "actuators": [{}] * 4, "backend": {"plant": plant}}
    module = build_module("experimental", config)
    module.open(Session(DT, module.describe().dof_names))
    targets = np.array([[0.0] * 4, [0.01, -0.02, 0.01, 0.02], [0.03, 0.01, -0.02, 0.01]])
    for step, target in enumerate(targets):
        module.propose(step, Command(step * DT, target))
        result = module.execute(step)
        module.commit(step)
        np.testing.assert_allclose(result.force, HEAD @ target, rtol=1e-9, atol=1e-6)
    loads = {r.name: r for r in module.records()}["measured_loads"]
    assert loads.columns[-2:] == ("load_cell_5", "load_cell_6")
    np.testing.assert_array_equal(loads.values[:, 4:], 1.0e5)
    assert np.all(np.abs(loads.values[1:, :4]) > 1e3)  # the actuators push the head and against the rods
    module.close()


def test_a_rig_read_by_its_braces_refuses_actuator_load_limits_and_a_plant_daemon() -> None:
    braced = {"kind": "inverted-v-brace", "lengths": [1.5, 1.0, 1.0], "half_span": 0.8,
              "braces": {"feet": [[-1.5, -2.0], [1.5, -2.0]]}}
    plant = {"dt": DT, "dofs": ["a1", "a2", "a3"], "actuators": [{"model": "ideal"}] * 3,
             "specimen": {"kind": "linear", "stiffness": np.eye(3).tolist(), "setup": braced}}
    config = {"dt": DT, "setup": braced, "actuators": [{"force": 1e5}, {}, {}], "backend": {"plant": plant}}
    with pytest.raises(ModuleError, match=r"actuators\[\].force: this rig's load cells are not the actuators'"):
        module = build_module("experimental", config)
        module.open(Session(DT, module.describe().dof_names))
    with pytest.raises(ModuleError, match="plant module: its specimen reads 6 load cells"):
        build_module("plant", plant)
