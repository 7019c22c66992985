"""Safety limits at the site: refused before anything moves, the site on hold, the reason named."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.wire.contract import Command, ModuleError, Session, StepRefused
from hybridsim.modules.registry import build_module
from tests.conftest import MARTHS_DATA

SPRING = {"dofs": ["x"], "law": "bilinear", "stiffness": 1.0e5, "yield_displacement": 0.01, "hardening_ratio": 0.1}


def opened(limits: dict, confirm=lambda _q: True):
    module = build_module("spring", {**SPRING, "limits": limits}, confirm=confirm)
    module.open(Session(0.01, ("x",)))
    return module


def step(module, n: int, d: float):
    module.propose(n, Command(0.0, np.array([d])))
    result = module.execute(n)
    module.commit(n)
    return result


@pytest.mark.parametrize("limits, command, expected", [
    ({"displacement": 0.02}, 0.021, "displacement limit on DOF 'x': 0.021 > 0.02 m"),
    ({"increment": 0.001}, 0.0017, "increment limit on DOF 'x': 0.0012 > 0.001 m per step"),
    ({"velocity": 0.1}, 0.0017, "velocity limit on DOF 'x': 0.12 > 0.1 m/s"),
    ({"force": 100.0, "force_stiffness": 1.0e5}, 0.0011, "force limit on DOF 'x': 110 > 100 N (predicted)"),
])
def test_an_out_of_limit_command_is_refused_and_the_actuator_state_is_unchanged(limits, command, expected):
    module = opened(limits)
    step(module, 1, 0.0005)
    committed = module.inner.specimen.committed
    with pytest.raises(StepRefused, match=expected.replace("(", r"\(").replace(")", r"\)")):
        module.propose(2, Command(0.01, np.array([command])))
    assert module.inner.specimen.committed == committed  # nothing moved
    assert module.inner.stats["proposed"] == 1  # the refused command never reached the actuator
    with pytest.raises(StepRefused, match="site on hold: step 2"):  # and the site stays on hold
        module.propose(3, Command(0.02, np.array([0.0005])))


def test_the_force_interlock_holds_the_site_after_a_measured_overload():
    module = opened({"force": 150.0})
    assert step(module, 1, 0.001).force[0] == pytest.approx(100.0)
    assert step(module, 2, 0.002).force[0] == pytest.approx(200.0)  # measured past the limit
    with pytest.raises(StepRefused, match="measured at step 2: force limit on DOF 'x': 200 > 150 N"):
        module.propose(3, Command(0.03, np.array([0.002])))
    state = module.checkpoint()  # the overload survives a reconnect and a restore
    module.open(Session(0.01, ("x",)))
    module.restore(state)
    with pytest.raises(StepRefused, match="site on hold: measured at step 2"):
        module.propose(4, Command(0.0, np.array([0.0])))


def test_operator_confirmation_of_the_first_steps():
    asked = []
    module = opened({"confirm_first": 2}, confirm=lambda q: asked.append(q) or len(asked) < 3)
    step(module, 1, 0.001)
    step(module, 2, 0.002)
    step(module, 3, 0.003)  # past the first two: no question
    assert asked == ["step 1: move to x = 0.001?", "step 2: move to x = 0.002?"]
    refusing = opened({"confirm_first": 1}, confirm=lambda q: False)
    with pytest.raises(StepRefused, match="operator did not confirm"):
        refusing.propose(1, Command(0.0, np.array([0.001])))


def test_bad_limits_are_refused_with_the_key():
    with pytest.raises(ModuleError, match="unknown key limits.stroke; allowed: confirm_first, displacement"):
        build_module("spring", {**SPRING, "limits": {"stroke": 0.1}})
    with pytest.raises(ModuleError, match="limits.increment must be a number or a list of 1 numbers"):
        build_module("spring", {**SPRING, "limits": {"increment": [0.1, 0.2]}})


def test_the_coordinator_stops_cleanly_naming_limit_dof_and_step(tmp_path):
    table = {
        "experiment": {"name": "limited", "dt": 0.01},
        "structure": {"dofs": ["x"], "mass_diagonal": [100.0], "influence": [1.0]},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 1.0},
        "modules": [{"name": "lab", "kind": "spring", "config": {**SPRING, "limits": {"displacement": 0.01}}}],
        "output": {"file": str(tmp_path / "limited.h5")},
    }
    with pytest.raises(RunStopped, match=r"module 'lab' \(in process\) at step (\d+) \(t = [\d.]+ s\): "
                                         r"step \1 refused: displacement limit on DOF 'x'"):
        run_experiment(parse_experiment(table, base_dir=tmp_path))
    stored = read_results(tmp_path / "limited.h5")
    assert np.max(np.abs(stored["displacement"])) <= 0.01  # no recorded step went past the limit


def test_a_site_daemon_asks_its_operator_at_the_terminal(tmp_path):
    """The real `hybridsim site` prompts on its terminal; the operator confirms the pre-test, then refuses."""
    import json
    import subprocess
    import sys

    from tests.coordinator.test_resume_after_site_crash import free_port

    config = tmp_path / "lab.json"
    config.write_text(json.dumps({**SPRING, "limits": {"confirm_first": 5}}))
    port = free_port()
    port_file = tmp_path / "port"
    site = subprocess.Popen([sys.executable, "-m", "hybridsim", "site", "spring", "--config", str(config),
                             "--listen", f"127.0.0.1:{port}", "--port-file", str(port_file)],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        site.stdin.write("y\ny\ny\nn\n")  # the pre-test's three steps (+h, -h, rest), then no
        site.stdin.flush()
        table = {
            "experiment": {"name": "confirmed", "dt": 0.01},
            "structure": {"dofs": ["x"], "mass_diagonal": [100.0], "influence": [1.0]},
            "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 1.0},
            "modules": [{"name": "lab", "kind": "spring", "address": f"127.0.0.1:{port}",
                         "deadline_s": 30.0}],
            "output": {"file": str(tmp_path / "confirmed.h5")},
        }
        with pytest.raises(RunStopped, match="operator did not confirm"):
            run_experiment(parse_experiment(table, base_dir=tmp_path))
        assert read_results(tmp_path / "confirmed.h5")["attrs"]["completed_steps"] == 1  # only the rest state
    finally:
        site.terminate()
        _, err = site.communicate(timeout=10)
    assert "step 4: move to x = " in err  # the question the operator saw


def test_module_configurations_cannot_reach_outside_their_folder_or_be_huge(tmp_path):
    outside = tmp_path / "secret.csv"
    outside.write_text("1.0\n")
    site = tmp_path / "site"
    site.mkdir()
    (site / "k.csv").write_text("2.0\n")
    assert build_module("linear", {"dofs": ["x"], "stiffness_file": "k.csv"}, site).stiffness[0, 0] == 2.0
    with pytest.raises(ModuleError, match="lies outside the configuration's folder"):
        build_module("linear", {"dofs": ["x"], "stiffness_file": "../secret.csv"}, site)
    with pytest.raises(ModuleError, match="lies outside the configuration's folder"):
        build_module("linear", {"dofs": ["x"], "stiffness_file": str(outside)}, site)
    with pytest.raises(ModuleError, match="more than 4,000,000 numbers"):
        build_module("linear", {"dofs": ["x"], "stiffness": [[0.0] * 2001] * 2001}, site)


def test_an_opensees_site_cannot_run_a_model_file_outside_its_folder(tmp_path):
    (tmp_path / "evil.py").write_text("def build(ops):\n    raise SystemExit('should never run')\n")
    site = tmp_path / "site"
    site.mkdir()
    config = {"model": "../evil.py", "control": [{"name": "x", "node": 1, "dof": 1}]}
    with pytest.raises(ModuleError, match="lies outside the configuration's folder"):
        build_module("opensees", config, site)


def test_limits_on_a_rotation_speak_in_radians_and_newton_metres():
    module = build_module("linear", {"dofs": ["theta"], "kinds": ["rotation"], "stiffness": [[1.0e4]],
                                     "limits": {"increment": 0.01, "force": 50.0, "force_stiffness": 1.0e4}})
    module.open(Session(0.01, ("theta",)))
    with pytest.raises(StepRefused, match=r"increment limit on DOF 'theta': 0.02 > 0.01 rad per step"):
        module.propose(1, Command(0.0, np.array([0.02])))
    module.open(Session(0.01, ("theta",)))
    with pytest.raises(StepRefused, match=r"force limit on DOF 'theta': 80 > 50 N\*m \(predicted\)"):
        module.propose(1, Command(0.0, np.array([0.008])))


def test_a_run_stopped_by_a_hold_says_in_its_results_file_that_it_held_and_why(tmp_path):
    """The status of the results file (what the monitor's final state and the report show) names the hold and the
    measured force that set it (k d of the step's alpha-OS command, beyond the limit), and the run stops at the step after the
    first whose force, in an unlimited run's file, passes the limit (half its peak)."""
    from hybridsim.coordinator.experiment import load_experiment
    from hybridsim.coordinator.recorder import read_attributes
    from tests.coordinator.test_stopped_run_statistics import _experiment

    whole = read_results(run_experiment(load_experiment(_experiment(tmp_path)), output=tmp_path / "whole.h5").output)
    force = whole["restoring_force"][:, 0]  # the column's restoring force per row (N)
    limit = float(0.5 * np.abs(force).max())
    path = _experiment(tmp_path)
    path.write_text(path.read_text().replace("stiffness = [[39478.417604357434]] }",
                                             f"stiffness = [[39478.417604357434]], limits = {{ force = {limit!r} }} }}"))
    with pytest.raises(RunStopped, match="site on hold: measured at step"):
        run_experiment(load_experiment(path), output=tmp_path / "held.h5")
    status = read_attributes(tmp_path / "held.h5")["status"]
    first = int(np.flatnonzero(np.abs(force) > limit)[0])  # the first row whose measured force is past the limit
    assert f"at step {first + 1} " in status  # the next step is refused
    held = re.search(r"site on hold: measured at step \d+: force limit on DOF 'x': (\S+) > (\S+) N", status)
    assert held is not None, status
    assert limit < abs(float(held[1])) < np.abs(force).max() and float(held[2]) == pytest.approx(limit, rel=1e-5)
