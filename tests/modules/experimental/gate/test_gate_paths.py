"""Nothing reaches an actuator but through the site's gate (issue 31), each path against a real controller process
that logs every command it receives (logging_controller.py, an ECGenericTCP server): the assertions are on the
largest command and the largest single-sample jump that controller ever received."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import Command, ModuleError, Session

CONTROLLER = Path(__file__).with_name("logging_controller.py")
STROKE, INCREMENT, FORCE = 0.010, 0.002, 150.0
"""the actuator's limits in these tests: m, m per sample, N (the controller's load cell reads 1e5 N/m x stroke)"""


@pytest.fixture
def controller(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, Path]]:
    """A logging controller whose actuator stands at ``request.param`` m (0 unless parametrized)."""
    log = tmp_path / "commands.jsonl"
    process = subprocess.Popen([sys.executable, str(CONTROLLER), str(log), str(getattr(request, "param", 0.0))],
                               stdout=subprocess.PIPE, text=True)
    try:
        port = int(process.stdout.readline())
        yield f"127.0.0.1:{port}", log
    finally:
        process.kill()
        process.wait(10)


def received(log: Path) -> np.ndarray:
    """Every command the controller received (m), in order."""
    lines = log.read_text().splitlines() if log.exists() else []
    return np.array([json.loads(line)[0] for line in lines])


def largest_jump(log: Path, start: float = 0.0) -> float:
    commands = received(log)
    return float(np.max(np.abs(np.diff(np.concatenate(([start], commands)))))) if commands.size else 0.0


def site(address: str, **extra) -> object:
    actuator = {"stroke": STROKE, "force": FORCE, **extra.pop("actuator", {})}
    gate = {"increment": INCREMENT, **extra.pop("gate", {})}
    return build_module("experimental", {"dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u"},
                                         "actuators": [actuator], "gate": gate, "initial_stiffness": [[1e5]],
                                         "backend": {"generic_tcp": address, "channels": 1}, **extra})


def steps(module, targets, first: int = 1, dt: float = 0.01, step: int | None = None) -> list:
    """Steps to ``targets`` (m) at t = first dt, (first + 1) dt, ..; step IDs from ``step`` (default: first)."""
    results = []
    for j, target in enumerate(targets):
        k, n = (first if step is None else step) + j, first + j
        module.propose(k, Command(n * dt, np.array([target])))
        results.append(module.execute(k))
        module.commit(k)
    return results


def at_rest(module, step: int = 0) -> None:
    module.propose(step, Command(0.0, np.zeros(1)))
    module.execute(step)
    module.commit(step)


@pytest.mark.parametrize("controller", [0.040], indirect=True)
def test_a_new_session_reads_without_moving_and_refuses_to_start_away_from_the_start(controller) -> None:
    """Before: the site read the actuators by commanding zero, a 40 mm jump in one sample."""
    address, log = controller
    module = site(address)
    module.open(Session(0.01, ("u",)))
    with pytest.raises(ModuleError, match="actuator 1 is at 40 mm and the test starts at 0 mm"):
        at_rest(module)
    module.close()
    assert received(log).size == 0  # nothing was commanded: the reading is the controller's response request


@pytest.mark.parametrize("controller", [0.040], indirect=True)
def test_a_declared_start_away_from_zero_moves_nothing_and_steps_from_there(controller) -> None:
    """A specimen installed at 40 mm (gate.start): the reading at rest sends nothing, the coordinator's 1 mm is the
    controller's 41 mm, and the increment is from the measured stroke (42.5 mm, not 2.5)."""
    address, log = controller
    module = site(address, gate={"start": 0.040}, actuator={"stroke": 0.050, "force": 1e4})
    module.open(Session(0.01, ("u",)))
    at_rest(module)
    assert received(log).size == 0
    results = steps(module, [0.001, 0.0025])
    with pytest.raises(ModuleError, match="command 46 mm is 3.5 mm from its measured stroke 42.5 mm"):
        steps(module, [0.006], first=3)
    module.close()
    np.testing.assert_allclose(received(log), [0.041, 0.0425], rtol=1e-12)
    np.testing.assert_allclose([r.displacement[0] for r in results], [0.001, 0.0025], rtol=1e-9)
    assert largest_jump(log, start=0.040) == pytest.approx(0.0015)


def test_every_command_is_within_the_stroke_and_the_increment_from_the_measured_stroke(controller) -> None:
    address, log = controller
    module = site(address, actuator={"force": 1e4})
    module.open(Session(0.01, ("u",)))
    at_rest(module)
    steps(module, [0.001, 0.0025, 0.004])
    with pytest.raises(ModuleError, match="beyond 2 mm per sample"):
        steps(module, [0.0075], first=4)  # 3.5 mm from the measured 4 mm
    module.close()
    module = site(address, actuator={"force": 1e4})  # a new session: from where it is (4 mm)
    module.open(Session(0.01, ("u",)))
    with pytest.raises(ModuleError, match="actuator 1 is at 4 mm"):
        at_rest(module)
    module.close()
    module = site(address, gate={"start_tolerance": 0.005}, actuator={"force": 1e4})  # a lab that declares it starts there
    module.open(Session(0.01, ("u",)))
    at_rest(module)
    steps(module, [0.0055, 0.0075, 0.0095])
    with pytest.raises(ModuleError, match="target stroke 10.5 mm beyond its limit 10 mm"):
        steps(module, [0.0105], first=4)
    module.close()
    assert np.abs(received(log)).max() <= STROKE and largest_jump(log) <= INCREMENT * (1 + 1e-12)


def move_at_the_lab(address: str, position: float) -> None:
    """The lab's own console moves the actuator (a command that does not come from the site)."""
    import struct

    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10.0) as console:
        console.sendall(struct.pack("=11i", 1, 0, 0, 0, 1, 1, 0, 0, 1, 0, 4) + np.array([3.0, position, 0.0, 0.0])
                        .tobytes() + np.array([99.0, 0.0, 0.0, 0.0]).tobytes())
        console.recv(1)  # the controller closes after 99


def test_a_measured_overload_holds_the_site_across_sessions_until_an_operator_clears_it(controller) -> None:
    """Before: closing and opening a session lifted the hold."""
    address, log = controller
    module = site(address, gate={"start_tolerance": 0.005})
    module.open(Session(0.01, ("u",)))
    at_rest(module)
    with pytest.raises(ModuleError, match="load cell reads 160 N, beyond its limit 150 N"):
        steps(module, [0.0008, 0.0016])
    module.close()
    sent = received(log).size
    module.open(Session(0.01, ("u",)))
    with pytest.raises(ModuleError, match="load cell reads 160 N"):  # still overloaded: it does not start
        at_rest(module, 10)
    module.close()
    move_at_the_lab(address, 0.0)  # the operator unloads the specimen at the lab's controller
    module.open(Session(0.01, ("u",)))
    at_rest(module, 20)  # reading is allowed while held: nothing moves
    with pytest.raises(ModuleError, match="the site is held since actuator 1: load cell reads 160 N"):
        steps(module, [0.0008], step=21)
    module.close()
    assert received(log).size == sent + 1  # only the lab's own command reached the controller while held
    assert module.interlock.clear("the test's operator") is not None
    module.open(Session(0.01, ("u",)))
    at_rest(module, 30)
    steps(module, [0.0008, 0.0], step=31)
    module.close()
    assert received(log)[-2:].tolist() == [0.0008, 0.0]


def test_the_site_clock_s_predictions_pass_the_gate(controller) -> None:
    """Before: the limits checked the targets that arrived, not the commands the clock made: a predictor past
    the stroke limit reached the controller after the coordinator stopped sending."""
    address, log = controller
    module = site(address, actuator={"force": 1e4}, gate={"increment": 0.01}, clock="own", dt=0.001,
                  command_generation={"scheme": "predictor-corrector", "order": 2})
    dt = 0.005  # five control samples of 1 ms per step
    module.open(Session(dt, ("u",)))
    at_rest(module)
    ramp = [0.0015 * k for k in range(1, 7)]  # to 9 mm; then nothing: the clock predicts on toward 10.35 mm
    for k, target in enumerate(ramp, start=1):
        module.propose(k, Command(k * dt, np.array([target])))
        module.execute(k)
        module.commit(k)
    time.sleep(0.1)  # the coordinator is gone: the clock predicts step 7 until it holds at 0.9 of it
    module.propose(7, Command(7 * dt, np.array([ramp[-1]])))
    with pytest.raises(ModuleError, match=r"target stroke 10\.\d+ mm beyond its limit 10 mm"):
        module.execute(7)
    module.close()
    assert np.abs(received(log)).max() <= STROKE


def test_the_hold_outlives_the_sessions_of_a_site_daemon(controller, tmp_path) -> None:
    """A site daemon builds a fresh module at every Open: its hold goes to the new one; `--move-to` beside the
    daemon refuses while it is held (before: it did not see the daemon's hold)."""
    from hybridsim.modules.experimental.held import held
    from hybridsim.wire.remote import RemoteModule
    from tests.interop.helpers import site as site_daemon

    address, log = controller
    config = {"dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u"}, "actuators": [{"stroke": STROKE, "force": FORCE}],
              "gate": {"increment": INCREMENT, "start_tolerance": 0.005, "move_speed": 0.1},
              "initial_stiffness": [[1e5]], "backend": {"generic_tcp": address, "channels": 1}}
    with site_daemon(tmp_path, "experimental", config) as lab:
        remote = RemoteModule(lab.addresses["module"], transport="unary")
        try:
            remote.open(Session(0.01, ("u",)))
            at_rest(remote)
            with pytest.raises(ModuleError, match="load cell reads 160 N"):
                steps(remote, [0.0008, 0.0016])
            remote.close()
            sent = received(log).size
            move_at_the_lab(address, 0.0)
            remote.open(Session(0.01, ("u",)))
            at_rest(remote, 10)
            with pytest.raises(ModuleError, match="the site is held since actuator 1: load cell reads 160 N"):
                steps(remote, [0.0008], step=11)
            remote.close()
            [path] = tmp_path.glob("experimental-*.json")  # the daemon's: --move-to beside it sees its hold
            moved = subprocess.run([sys.executable, "-m", "hybridsim", "site", "experimental", "--config", str(path),
                                    "--move-to", "0.005"], capture_output=True, text=True, timeout=60)
            assert moved.returncode == 2 and moved.stderr.count("\n") == 1, moved.stderr
            assert (f"is held since actuator 1: load cell reads 160 N" in moved.stderr
                    and f"hybridsim site-control {lab.addresses['module']} --clear" in moved.stderr), moved.stderr
        finally:
            remote.disconnect()
    assert received(log).size == sent + 1  # the lab's own command only
    assert held(path) is None  # the daemon ended: its notice with it


@pytest.mark.parametrize("controller", [0.040], indirect=True)
def test_move_to_brings_the_actuators_to_the_start_at_the_lab_s_speed(controller, tmp_path) -> None:
    """`hybridsim site experimental --move-to 0`: from 40 mm to the test's start, 1 mm a sample (0.1 m/s x 10 ms),
    every command through the gate; then the site starts there."""
    address, log = controller
    config = {"dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u"}, "actuators": [{"stroke": 0.05, "force": 1e4}],
              "gate": {"increment": INCREMENT}, "initial_stiffness": [[1e5]],
              "backend": {"generic_tcp": address, "channels": 1}}
    path = tmp_path / "site.json"
    path.write_text(json.dumps(config))
    command = [sys.executable, "-m", "hybridsim", "site", "experimental", "--config", str(path), "--move-to", "0"]
    refused = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "ramps at the lab's gate.move_speed (m/s): declare it" in refused.stderr
    config["gate"]["move_speed"] = 0.1
    path.write_text(json.dumps(config))
    moved = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert moved.stdout == "actuator 1: 40 mm -> 0 mm in 40 samples (0.4 s at 100 mm/s)\n", moved.stderr
    commands = received(log)
    assert commands.size == 40 and commands[-1] == 0.0
    assert largest_jump(log, start=0.040) == pytest.approx(0.001, rel=1e-9)
    module = site(address)
    module.open(Session(0.01, ("u",)))
    at_rest(module)  # at the start now
    module.close()


def test_a_session_opened_over_an_own_clock_session_stops_its_clock_first(controller) -> None:
    """Two sessions must never both command one controller: a session opened over an open one at a site on its own
    clock stops the first one's clock thread before that session's control is let go."""
    address, log = controller
    module = site(address, actuator={"force": 1e4}, gate={"increment": 0.01, "start_tolerance": 0.005}, clock="own",
                  dt=0.001, command_generation={"scheme": "predictor-corrector", "order": 2})
    dt = 0.005
    module.open(Session(dt, ("u",)))
    at_rest(module)
    for k, target in enumerate([0.001, 0.002, 0.003], start=1):
        module.propose(k, Command(k * dt, np.array([target])))
        module.execute(k)
        module.commit(k)
    first = module.clock
    module.open(Session(dt, ("u",)))  # a second session over the open one (the first coordinator never closed)
    assert not first.running
    sent = received(log).size
    time.sleep(0.05)
    assert received(log).size == sent  # nothing more from the first session's clock
    at_rest(module, 10)
    module.close()
    assert np.abs(received(log)).max() <= STROKE and largest_jump(log) <= 0.01


@pytest.mark.parametrize("guard, refusal", [
    ({"command": 5.0}, "command 8 beyond its bound 5"),
    ({"volts": 1.999, "volts_per_unit": 0.25}, "servo input 2.000 V beyond +-1.999 V")])
def test_move_to_keeps_within_the_actuators_runaway_guards(controller, guard, refusal) -> None:
    """The guard's command bound and servo volts (on the site's mm) hold for `--move-to` too: 8 mm (0.25 V/mm x 8 mm
    = 2 V) is refused before anything is sent; 4 mm is within them and ramps there, 1 mm a sample."""
    from hybridsim.modules.experimental.move import move_to

    address, log = controller
    config = {"dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u"},
              "actuators": [{"stroke": 0.05, "force": 1e4, "guard": guard}],
              "gate": {"increment": INCREMENT, "move_speed": 0.1}, "initial_stiffness": [[1e5]],
              "backend": {"generic_tcp": address, "channels": 1}}
    with pytest.raises(ModuleError) as refused:
        move_to(config, [0.008])
    assert str(refused.value) == ("experimental module: --move-to 8 mm is beyond actuator 1's runaway guard: "
                                  f"{refusal}; nothing was sent")
    assert received(log).size == 0
    assert move_to(config, [0.004]) == ["actuator 1: 0 mm -> 4 mm in 4 samples (0.04 s at 100 mm/s)"]
    assert received(log).tolist() == pytest.approx([0.001, 0.002, 0.003, 0.004], rel=1e-12)
