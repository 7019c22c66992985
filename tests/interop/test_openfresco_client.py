"""hybridsim drives OpenSees and OpenFresco servers: the `openfresco` module kind against an openseespy process
with an `adapter` element and against a hybridsim site's element and lab servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import ExperimentError, parse_experiment
from hybridsim.coordinator.recorder import read_checkpoint
from hybridsim.coordinator.simulation import resume_run, run_experiment
from tests.coordinator.test_resume_after_site_crash import free_port
from tests.interop.helpers import LINEAR, PEER, building, relative, site

pytestmark = pytest.mark.timeout(300)
PENALTY = 1.0e12
"""the adapter element's penalty stiffness (N/m): the error it leaves is about ||K|| / kp = 1e-6"""


def in_process(tmp_path, integrator: str = "alpha-os"):
    table = building(tmp_path, {"kind": "linear", "config": LINEAR}, f"local-{integrator}")
    table["integrator"] = {"kind": integrator}
    return run_experiment(parse_experiment(table, base_dir=tmp_path))


def openfresco(address: str, server: str) -> dict:
    return {"kind": "openfresco", "address": address, "deadline_s": 30.0,
            "config": {"dofs": ["u2", "u3"], "server": server}}


@pytest.mark.parametrize("server", ["elem-server", "lab-server"])
def test_the_openfresco_kind_steps_a_site_like_the_module_in_process(tmp_path, server):
    local = in_process(tmp_path)
    with site(tmp_path, "linear", LINEAR, "openfresco") as lab:
        table = building(tmp_path, openfresco(lab.addresses["openfresco"], server), server)
        remote = run_experiment(parse_experiment(table, base_dir=tmp_path))
        lab.wait_log("closed by the OpenFresco")
    assert relative(remote.displacement, local.displacement) < 1e-12


def adapter_process(port: int) -> subprocess.Popen:
    args = {"element": "adapter", "port": port, "penalty": PENALTY}
    return subprocess.Popen([sys.executable, str(PEER), json.dumps(args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_hybridsim_drives_an_opensees_adapter_element(tmp_path):
    """`hybridsim run` with the storeys in an openseespy process behind an adapter element (penalty 1e12 N/m)
    equals the in-process linear module to the penalty's tolerance ||K|| / kp (measured 1.6e-6)."""
    local = in_process(tmp_path)
    port = free_port()
    peer = adapter_process(port)
    try:
        table = building(tmp_path, openfresco(f"127.0.0.1:{port}", "adapter"), "adapter")
        remote = run_experiment(parse_experiment(table, base_dir=tmp_path))
        _, err = peer.communicate(timeout=60)
    finally:
        peer.kill()
    assert "successfully completed" in err  # the DIE ended the OpenSees process
    error = relative(remote.displacement, local.displacement)
    assert 1e-9 < error < 5 * np.linalg.norm(LINEAR["stiffness"], 2) / PENALTY


def test_an_adapter_refuses_to_discard_a_trial_after_the_first_commit(tmp_path):
    """An implicit Newmark step tries several trials; the adapter element would commit each of them."""
    port = free_port()
    peer = adapter_process(port)
    try:
        table = building(tmp_path, openfresco(f"127.0.0.1:{port}", "adapter"), "newmark")
        table["integrator"] = {"kind": "newmark"}
        with pytest.raises(RunStopped, match="cannot revert the trial of step"):
            run_experiment(parse_experiment(table, base_dir=tmp_path))
    finally:
        peer.kill()
        peer.wait(10)


@pytest.mark.parametrize("key, value, message", [
    ("address", "local", "connects to a server: give its address"),
    ("transport", "link", "has no transport: drop it"),
])
def test_a_protocol_kind_needs_an_address_and_no_transport(tmp_path, key, value, message):
    module = {**openfresco("127.0.0.1:1", "adapter"), key: value}
    with pytest.raises(ExperimentError, match=message):
        parse_experiment(building(tmp_path, module, "bad"), base_dir=tmp_path)


def test_a_server_that_is_not_running_is_named_with_what_to_start():
    """examples/bridge/bridge.toml run before its adapter process: the refusal says nothing listens there."""
    from hybridsim.modules.registry import build_module
    from hybridsim.wire.contract import ModuleError, Session

    address = f"127.0.0.1:{free_port()}"
    module = build_module("openfresco", {"address": address, "dofs": ["x"], "server": "adapter", "deadline_s": 0.2})
    with pytest.raises(ModuleError, match=f"cannot connect within 0.2 s: Connection refused \\(nothing listens at "
                                          f"{address}: start its server first\\)"):
        module.open(Session(0.01, ("x",)))


def test_checkpoints_are_refused_for_a_server_not_declared_path_independent(tmp_path):
    module = openfresco("127.0.0.1:1", "adapter")
    table = {**building(tmp_path, module, "checkpointed"), "output": {"file": str(tmp_path / "c.h5"), "checkpoint_every": 10}}
    with pytest.raises(ExperimentError, match="module 'building' cannot take checkpoints: .*path_independent = true"):
        parse_experiment(table, base_dir=tmp_path)
    module["config"]["path_independent"] = True
    parse_experiment(table, base_dir=tmp_path)


def checkpointed_adapter_run(tmp_path, kill_at: int, restart: dict):
    """A run with checkpoints every step through an adapter process that is killed (SIGKILL) after step
    ``kill_at``, started again with the peer arguments ``restart`` at the same port, and resumed."""
    port = free_port()
    module = openfresco(f"127.0.0.1:{port}", "adapter")
    module["config"]["path_independent"] = True
    table = building(tmp_path, module, "restarted")
    table["output"]["checkpoint_every"] = 1
    peer = adapter_process(port)
    try:
        def kill(n, _arrays):
            if n == kill_at:
                os.kill(peer.pid, signal.SIGKILL)
                peer.wait()

        with pytest.raises(RunStopped, match="OpenFresco adapter at 127.0.0.1:.*connection lost"):
            run_experiment(parse_experiment(table, base_dir=tmp_path), listeners=[kill])
    finally:
        peer.kill()
        peer.wait(10)
    assert read_checkpoint(tmp_path / "restarted.h5").step == kill_at
    peer = subprocess.Popen([sys.executable, str(PEER), json.dumps({"element": "adapter", "port": port,
                                                                    "penalty": PENALTY, **restart})],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        return resume_run(tmp_path / "restarted.h5")
    finally:
        peer.kill()
        peer.wait(10)


def test_an_adapter_process_killed_mid_run_is_restored_from_the_checkpoint_and_the_run_ends_as_uninterrupted(tmp_path):
    """The restarted process's elastic storeys are put back at the checkpoint's committed displacement (one
    trial): the resumed run equals one through an adapter never killed (round-off: the restarted model is solved
    from rest, the uninterrupted one from the previous step; the bound 1e-12 of the site-crash test)."""
    port = free_port()
    peer = adapter_process(port)
    try:
        uninterrupted = run_experiment(parse_experiment(building(tmp_path, openfresco(f"127.0.0.1:{port}", "adapter"),
                                                                 "uninterrupted"), base_dir=tmp_path))
    finally:
        peer.kill()
        peer.wait(10)
    resumed = checkpointed_adapter_run(tmp_path, 60, {})
    assert np.max(np.abs(uninterrupted.displacement[60])) > 5e-4  # killed while the building moves
    assert relative(resumed.displacement, uninterrupted.displacement) <= 1e-12


def test_a_restarted_server_whose_model_answers_another_force_is_refused(tmp_path):
    """Restarted with a yielding first storey (Steel01, 300 N) at a step where the elastic one carries more
    than 300 N: the force at the committed displacement differs, so the restore is refused, nothing resumed."""
    with pytest.raises(RunStopped, match="could not be restored: .*not the same elastic substructure"):
        checkpointed_adapter_run(tmp_path, 60, {"law": "steel01"})


def test_an_element_server_site_killed_mid_run_is_restored_and_committed(tmp_path):
    """The same through a hybridsim site's SimApp element server (a server that takes commits): the site is
    killed (SIGKILL) at step 60 and started again on the same port; the restore's trial is committed there,
    and the resumed run equals the module in process (< 1e-12, as uninterrupted)."""
    local = in_process(tmp_path)
    port = free_port()
    module = openfresco(f"127.0.0.1:{port}", "elem-server")
    module["config"]["path_independent"] = True
    table = building(tmp_path, module, "elem-restarted")
    table["output"]["checkpoint_every"] = 1
    with site(tmp_path, "linear", LINEAR, extra=("--openfresco", f"127.0.0.1:{port}")) as lab:
        def kill(n, _arrays):
            if n == 60:
                os.kill(lab.process.pid, signal.SIGKILL)
                lab.process.wait()

        with pytest.raises(RunStopped, match="OpenFresco elem-server"):
            run_experiment(parse_experiment(table, base_dir=tmp_path), listeners=[kill])
    with site(tmp_path, "linear", LINEAR, extra=("--openfresco", f"127.0.0.1:{port}")) as lab:
        resumed = resume_run(tmp_path / "elem-restarted.h5")
        lab.wait_log("closed by the OpenFresco")
    assert relative(resumed.displacement, local.displacement) < 1e-12
