"""hybridsim drives OpenSees and OpenFresco servers: the `openfresco` module kind against an openseespy process
with an `adapter` element and against a hybridsim site's element and lab servers."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import ExperimentError, parse_experiment
from hybridsim.coordinator.simulation import run_experiment
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
