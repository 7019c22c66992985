"""An interlock lasts until an operator clears it at the site (issue 31 item 3): `hybridsim site-control HOST:PORT
--clear`, behind the site's token, logged; a real site daemon in front of the logging controller process."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from hybridsim.wire.contract import ModuleError, Session
from hybridsim.wire.credentials import ClientCredentials
from hybridsim.wire.remote import RemoteModule
from tests.interop.helpers import site as site_daemon
from tests.modules.experimental.gate.test_gate_paths import (FORCE, INCREMENT, STROKE, at_rest, controller,
                                                             largest_jump, move_at_the_lab, received, steps)

__all__ = ["controller"]  # the fixture, used by name

TOKEN = "an-access-token-of-the-site-for-its-operator-0123"


def site_control(address: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hybridsim", "site-control", address, *args], capture_output=True,
                          text=True, timeout=60)


def test_a_hold_lasts_until_the_operator_clears_it_with_the_site_s_token(controller, tmp_path) -> None:
    address, log = controller
    token = tmp_path / "site.token"
    token.write_text(TOKEN + "\n")
    os.chmod(token, 0o600)
    config = {"dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u"}, "actuators": [{"stroke": STROKE, "force": FORCE}],
              "gate": {"increment": INCREMENT}, "initial_stiffness": [[1e5]],
              "backend": {"generic_tcp": address, "channels": 1}}
    with site_daemon(tmp_path, "experimental", config, extra=("--token-file", str(token))) as lab:
        where = lab.addresses["module"]
        remote = RemoteModule(where, transport="unary", credentials=ClientCredentials(token=TOKEN))
        try:
            remote.open(Session(0.01, ("u",)))
            at_rest(remote)
            with pytest.raises(ModuleError, match="load cell reads 160 N"):
                steps(remote, [0.0008, 0.0016])
            remote.close()
            move_at_the_lab(address, 0.0)  # the operator unloads the specimen at the lab's controller
            sent = received(log).size
            refused = site_control(where, "--clear")
            assert refused.returncode == 1 and "UNAUTHENTICATED" in refused.stdout  # no token: nothing cleared
            status = site_control(where, "--token-file", str(token))
            assert "held since actuator 1: load cell reads 160 N" in status.stdout, status.stdout + status.stderr
            remote.open(Session(0.01, ("u",)))  # a new session: still held
            at_rest(remote, 10)
            with pytest.raises(ModuleError, match="the site is held since actuator 1: load cell reads 160 N"):
                steps(remote, [0.0008], step=11)
            cleared = site_control(where, "--token-file", str(token), "--clear", "--operator", "the test's operator")
            assert "hold cleared (it was: actuator 1: load cell reads 160 N" in cleared.stdout
            lab.wait_log(r"site hold cleared by the test's operator \(site-control from .*127\.0\.0\.1")
            assert "not held" in site_control(where, "--token-file", str(token)).stdout
            assert received(log).size == sent  # nothing moved while held
            steps(remote, [0.0008, 0.0], step=12)
            remote.close()
        finally:
            remote.disconnect()
    assert received(log)[-2:].tolist() == [0.0008, 0.0]
    assert np.abs(np.diff(received(log)[sent - 1:])).max() <= INCREMENT and largest_jump(log) <= 0.0016 + 1e-12


def test_a_hold_kept_in_a_hold_file_outlives_the_site_process(controller, tmp_path) -> None:
    """A site daemon restarted while held (a supervisor's restart) starts held: --hold-file keeps the hold."""
    address, log = controller
    hold = tmp_path / "site.hold"
    config = {"dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u"}, "actuators": [{"stroke": STROKE, "force": FORCE}],
              "gate": {"increment": INCREMENT}, "initial_stiffness": [[1e5]],
              "backend": {"generic_tcp": address, "channels": 1}}
    with site_daemon(tmp_path, "experimental", config, extra=("--hold-file", str(hold))) as lab:
        remote = RemoteModule(lab.addresses["module"], transport="unary")
        try:
            remote.open(Session(0.01, ("u",)))
            at_rest(remote)
            with pytest.raises(ModuleError, match="load cell reads 160 N"):
                steps(remote, [0.0008, 0.0016])
            remote.close()
        finally:
            remote.disconnect()
    assert hold.read_text().startswith("actuator 1: load cell reads 160 N")
    move_at_the_lab(address, 0.0)
    sent = received(log).size
    with site_daemon(tmp_path, "experimental", config, extra=("--hold-file", str(hold))) as lab:
        where = lab.addresses["module"]
        assert "held since actuator 1: load cell reads 160 N" in site_control(where).stdout
        remote = RemoteModule(where, transport="unary")
        try:
            remote.open(Session(0.01, ("u",)))
            at_rest(remote)
            with pytest.raises(ModuleError, match="the site is held since actuator 1: load cell reads 160 N"):
                steps(remote, [0.0008])
            assert "hold cleared" in site_control(where, "--clear").stdout
            assert not hold.exists()
            steps(remote, [0.0008], step=2)
            remote.close()
        finally:
            remote.disconnect()
    assert received(log)[sent:].tolist() == [0.0008]
