"""The site operator service's ``Hold`` (docs/security.md, "The operator's service"): behind the site's access token
like every rpc, it sets the site's interlock with its reason (kept when one is set), the next step is refused
through the gate, and only ``Clear`` lifts it; a site without an interlock refuses it.  Real site daemons."""

from __future__ import annotations

import os
from pathlib import Path

import grpc
import numpy as np
import pytest

from hybridsim.wire import site_control
from hybridsim.wire.contract import Command, ModuleError, Session
from hybridsim.wire.credentials import ClientCredentials
from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.remote import RemoteModule

TOKEN = "the-site-s-own-access-token-for-holds-0123456789"
SPRING = {"dofs": ["u"], "stiffness": [[1.0e5]]}
WHY = "integrity: column's energy error 21.3 passed its threshold 20 at step 221 (t = 0.221 s)"


def step(module: RemoteModule, n: int, target: float) -> np.ndarray:
    """Step n to ``target`` (m) at t = n dt; the restoring force (N)."""
    module.propose(n, Command(0.01 * n, np.array([target])))
    force = module.execute(n).force
    module.commit(n)
    return force


def refused(channel: grpc.Channel, method: str, request: dict) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        site_control.call(channel, method, request)
    return caught.value


def test_hold_needs_the_site_s_token_and_lasts_until_clear(tmp_path: Path) -> None:
    token = tmp_path / "site.token"
    token.write_text(TOKEN + "\n")
    os.chmod(token, 0o600)
    guarded = {**SPRING, "limits": {"displacement": 0.05}}  # [limits] give a linear site its interlock
    with LocalDaemon("linear", guarded, name="column", site_args=("--token-file", token),
                     credentials=ClientCredentials(token=TOKEN)) as daemon:
        address = daemon.start()
        with grpc.insecure_channel(address) as bare, ClientCredentials(token="x" * 40).channel(address) as wrong:
            for channel in (bare, wrong):
                assert refused(channel, "Hold", {"reason": "a stranger"}).code() is grpc.StatusCode.UNAUTHENTICATED
        with ClientCredentials(token=TOKEN).channel(address) as channel:
            assert site_control.call(channel, "Status", {})["held"] is None  # the refused calls set nothing
            assert refused(channel, "Hold", {"reason": " "}).code() is grpc.StatusCode.INVALID_ARGUMENT
            assert site_control.call(channel, "Hold", {"reason": WHY})["held"] == WHY
            assert site_control.call(channel, "Hold", {"reason": "a second"})["held"] == WHY  # the first is kept
            remote = RemoteModule(address, transport="unary", credentials=ClientCredentials(token=TOKEN))
            try:
                remote.open(Session(0.01, ("u",)))
                with pytest.raises(ModuleError, match="site on hold: integrity: column's energy error"):
                    step(remote, 1, 0.001)
                assert site_control.call(channel, "Clear", {"operator": "the test"})["cleared"] == WHY
                assert step(remote, 2, 0.001) == pytest.approx([100.0], rel=1e-12)  # K d
                remote.close()
            finally:
                remote.disconnect()


def test_a_site_without_an_interlock_refuses_hold(tmp_path: Path) -> None:
    with LocalDaemon("linear", SPRING, name="spring") as daemon:
        with grpc.insecure_channel(daemon.start()) as channel:
            answer = refused(channel, "Hold", {"reason": WHY})
    assert answer.code() is grpc.StatusCode.FAILED_PRECONDITION and "has no hold to set" in answer.details()
