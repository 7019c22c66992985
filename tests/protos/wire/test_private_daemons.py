"""Local daemons that the coordinator starts carry an access token made for the run: on a shared machine,
another user's client on loopback is refused."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.remote import RemoteModule
from hybridsim.wire.contract import Command, ModuleError, Session

SPRING = {"dofs": ["x"], "stiffness": [[2.0e5]]}


def test_a_private_daemon_serves_its_token_holder_and_refuses_anyone_else():
    with LocalDaemon("linear", SPRING, name="private", private=True) as daemon:
        stranger = RemoteModule(daemon.address, name="stranger", deadline_s=3.0)
        with pytest.raises(ModuleError, match="UNAUTHENTICATED|token"):
            stranger.describe()
        stranger.disconnect()
        owner = RemoteModule(daemon.address, name="owner", deadline_s=10.0, credentials=daemon.credentials)
        owner.open(Session(0.01, ("x",)))
        owner.propose(1, Command(0.0, np.array([0.001])))
        assert owner.execute(1).force[0] == pytest.approx(200.0)
        owner.close()
        owner.disconnect()
    assert daemon.credentials.token and len(daemon.credentials.token) >= 32


def test_the_token_file_is_readable_by_its_owner_only():
    daemon = LocalDaemon("linear", SPRING, name="private", private=True)
    try:
        daemon.start()
        token_file = daemon.log_path.parent / "token"
        assert token_file.stat().st_mode & 0o077 == 0
        assert token_file.parent.stat().st_mode & 0o077 == 0
    finally:
        daemon.stop()
