"""The step link (hybridsim.wire.link, hybridsim.wire.channels.link) of real `hybridsim site` daemons on 127.0.0.1.

The hosted module is the 2-DOF spring pair K = [[2, -1], [-1, 2]] kN/m, so
every force is K d worked by hand: d = (1, 0) mm gives (2, -1) N.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.cli.certs import make_certificates
from hybridsim.wire.credentials import ClientCredentials
from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.remote import RemoteModule
from hybridsim.v1 import module_pb2 as pb
from hybridsim.v1 import module_pb2_grpc as pb_grpc
from hybridsim.wire import codec, link
from hybridsim.wire.channels.link import LinkConnection
from hybridsim.wire.contract import Command, ModuleError, Session, StepRefused, StepResult
from hybridsim.modules.linear import LinearModule
from hybridsim.wire.security import SiteAccess
from hybridsim.wire.server import LINK_FOLDER_PREFIX, SiteServer, remove_stale_link_folders
from tests.conftest import free_port

CONFIG = {"dofs": ["x1", "x2"], "stiffness": [[2000.0, -1000.0], [-1000.0, 2000.0]]}
K = np.array(CONFIG["stiffness"])


@pytest.fixture(scope="module")
def daemon():
    with LocalDaemon("linear", CONFIG, name="left", private=True) as running:
        yield running


def remote(daemon: LocalDaemon, **options) -> RemoteModule:
    return RemoteModule(daemon.address, name="left", deadline_s=5, transport="link", credentials=daemon.credentials,
                        **options)


def link_of(daemon: LocalDaemon) -> tuple[str, str]:
    """(TCP link address, session id) of a fresh session the daemon opened over gRPC."""
    with daemon.credentials.channel(daemon.address) as channel:
        stub = pb_grpc.ModuleStub(channel)
        address = link.link_address(codec.description_from_proto(
            stub.Describe(pb.DescribeRequest(version=codec.PROTOCOL), timeout=5)).info)
        session_id = stub.Open(codec.session_to_proto(Session(0.01, ("x1", "x2"))), timeout=5).session_id
    assert address is not None
    return address, session_id


def fifty_steps_give_k_d(module: RemoteModule) -> None:
    module.open(Session(0.01, ("x1", "x2"), run_id="link"))
    forces = []
    for n in range(50):
        module.propose(n, Command(0.01 * n, np.array([1e-3 * n, 0.0]), velocity=np.array([0.1, 0.0])))
        forces.append(module.execute(n).force)
        module.commit(n)
    np.testing.assert_allclose(forces, [K @ [1e-3 * n, 0.0] for n in range(50)], rtol=1e-15, atol=0)
    assert forces[1] == pytest.approx([2.0, -1.0], abs=1e-12)
    stats = module.close()
    module.disconnect()
    assert (stats["proposed"], stats["executed"], stats["committed"], stats["retried"]) == (50, 50, 50, 0)


@pytest.mark.parametrize("way", ["unix", "tcp"])
def test_steps_over_the_link_give_k_d_and_a_resent_frame_is_answered_from_the_record(daemon, way):
    info = RemoteModule(daemon.address, credentials=daemon.credentials).describe().info
    unix = link.link_address(info, same_machine=True)
    assert unix.startswith(link.UNIX) and unix.endswith("/link.sock")
    assert Path(unix.removeprefix(link.UNIX)).parent.stat().st_mode & 0o077 == 0  # only this user gets in
    fifty_steps_give_k_d(remote(daemon, link_address=None if way == "unix" else link.link_address(info)))

    address, session = link_of(daemon)
    connection = LinkConnection(address, daemon.credentials.token, session, timeout_s=5)
    frame = link.step_frame(0, None, Command(0.0, np.array([2e-3, 1e-3])), execute=True)
    first, again = connection.exchange(frame, 5), connection.exchange(frame, 5)
    connection.close()
    assert isinstance(first, StepResult) and first.step == 0
    np.testing.assert_array_equal(first.force, again.force)
    assert list(first.force) == pytest.approx([3.0, 0.0], abs=1e-12)  # K (2, 1) mm


@pytest.mark.parametrize("command, refusal", [
    (Command(0.05, np.array([1.0])), "displacement has 1 values"),
    (Command(0.05, np.array([0.0, np.inf])), "displacement has"),
    (Command(0.05, np.array([1e-3, 0.0]), velocity=np.array([0.1])), "velocity has 1 values"),  # as over gRPC
])
def test_a_refused_step_on_the_link_is_a_step_refused_naming_the_site_and_the_next_step_runs(daemon, command, refusal):
    module = remote(daemon)
    module.open(Session(0.01, ("x1", "x2")))
    with pytest.raises(StepRefused, match=f"^step 5 refused: site left at {daemon.address}: {refusal}"):
        module.propose(5, command)
        module.execute(5)
    module.propose(6, Command(0.06, np.array([1e-3, 0.0])))
    assert list(module.execute(6).force) == pytest.approx([2.0, -1.0], abs=1e-12)
    module.close()
    module.disconnect()


def test_the_link_refuses_a_missing_or_wrong_token_before_any_step(daemon):
    address, session = link_of(daemon)
    for token, reason in ((None, "needs an access token"), ("x" * 43, "refused the access token")):
        with pytest.raises(link.LinkError, match=reason) as info:
            LinkConnection(address, token, session, timeout_s=5)
        assert info.value.code == "UNAUTHENTICATED"
    other = SiteServer(lambda: LinearModule.from_config(CONFIG), "other", access=SiteAccess(token="y" * 43))
    try:  # a link_address that leads to another site's link (a tunnel to the wrong port): its HELLO is refused
        other_link = link.link_address(RemoteModule(other.address, credentials=ClientCredentials(token="y" * 43))
                                       .describe().info)
        wrong = RemoteModule(daemon.address, name="left", deadline_s=5, transport="link",
                             credentials=daemon.credentials, link_address=other_link)
        wrong.open(Session(0.01, ("x1", "x2")))
        with pytest.raises(ModuleError, match=f"^site left at {daemon.address}: execute of step 0: UNAUTHENTICATED: "
                                              "site other refused the access token"):
            wrong.propose(0, Command(0.0, np.zeros(2)))
            wrong.execute(0)
        wrong.disconnect()
    finally:
        other.stop(0)


def raw_link(address: str, token: str | None, session: str) -> socket.socket:
    host, _, port = address.rpartition(":")
    connection = socket.create_connection((host, int(port)), timeout=5)
    connection.sendall(link.hello_frame(token, session))
    assert link.read_frame(connection, 1024) == bytes((link.WELCOME,))
    return connection


@pytest.mark.parametrize("payload", [b"\x02\x00", b"\x09" + bytes(31), struct.pack("<BBqqdI", 2, 0x40, 0, 0, 0.0, 0),
                                     struct.pack("<BBqqdI", 2, 6, 1, 0, 0.01, 2) + bytes(8)])
def test_a_malformed_frame_is_refused_and_the_connection_closed_and_the_site_serves_on(daemon, payload):
    address, session = link_of(daemon)
    connection = raw_link(address, daemon.credentials.token, session)
    connection.sendall(struct.pack("<I", len(payload)) + payload)
    with pytest.raises(link.LinkError, match="malformed step frame") as info:
        link.parse_reply(link.read_frame(connection, 1024))
    assert info.value.code == "INVALID_ARGUMENT"
    assert connection.recv(1) == b""  # closed by the site
    connection.close()
    fifty_steps_give_k_d(remote(daemon))


def test_an_oversized_frame_or_a_first_frame_that_is_no_hello_is_refused(daemon):
    address, session = link_of(daemon)
    connection = raw_link(address, daemon.credentials.token, session)
    connection.sendall(struct.pack("<I", 2**31))
    with pytest.raises(link.LinkError, match="over the limit of"):
        link.parse_reply(link.read_frame(connection, 1024))
    connection.close()
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        connection.sendall(link.step_frame(0, None, Command(0.0, np.zeros(2)), execute=True))
        with pytest.raises(link.LinkError, match="the first frame must be a HELLO"):
            link.parse_reply(link.read_frame(connection, 1024))


def test_a_killed_daemon_stops_the_link_client_within_its_deadline_naming_the_site_and_step():
    with LocalDaemon("linear", CONFIG, name="right") as daemon:
        module = RemoteModule(daemon.address, name="right", deadline_s=1.0, transport="link")
        module.open(Session(0.01, ("x1", "x2")))
        folder = Path(link.link_address(module.describe().info, same_machine=True).removeprefix(link.UNIX)).parent
        for n in range(5):
            module.propose(n, Command(0.01 * n, np.array([1e-3 * n, 0.0])))
            module.execute(n)
            module.commit(n)
        os.kill(daemon.pid, signal.SIGKILL)
        start = time.monotonic()
        with pytest.raises(ModuleError) as info:
            module.propose(5, Command(0.05, np.zeros(2)))
            module.execute(5)
        assert time.monotonic() - start < 1.0 + 0.3
        assert str(info.value).startswith(f"site right at {daemon.address}: execute of step 5: step link to unix:/")
        assert "link.sock lost: " in str(info.value)
    assert folder.is_dir()  # a killed site could not remove its link folder: the next site to start does
    SiteServer(lambda: LinearModule.from_config(CONFIG), "next").stop(0)
    assert not folder.exists()


def test_only_link_folders_of_this_user_s_sites_that_no_longer_run_are_removed(tmp_path):
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()  # its process id no longer runs
    dead, alive = (tmp_path / f"{LINK_FOLDER_PREFIX}{pid}-abc" for pid in (ended.pid, os.getpid()))
    for folder in (dead, alive, tmp_path / f"{LINK_FOLDER_PREFIX}old"):
        folder.mkdir()
        (folder / "link.sock").touch()
    assert remove_stale_link_folders(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, f"{LINK_FOLDER_PREFIX}old"])


def test_a_site_serves_no_link_where_it_could_not_authenticate_its_clients():
    assert "mutual TLS" in link.serves_link("127.0.0.1:0", client_certificates=True, insecure=False)
    assert "loopback only" in link.serves_link("0.0.0.0:0", client_certificates=False, insecure=False)
    assert link.serves_link("0.0.0.0:0", client_certificates=False, insecure=True) is None
    with pytest.raises(ModuleError, match="^--link-listen 0.0.0.0:0: the step link has no TLS"):
        SiteServer(lambda: LinearModule.from_config(CONFIG), "wide", link_listen="0.0.0.0:0",
                   access=SiteAccess(token="t" * 32))
    server = SiteServer(lambda: LinearModule.from_config(CONFIG), "nolink", link_listen=None)
    try:
        module = RemoteModule(server.address, name="nolink", deadline_s=2, transport="link")
        with pytest.raises(ModuleError, match="the site serves no step link"):
            module.open(Session(0.01, ("x1", "x2")))
        module.disconnect()
    finally:
        server.stop(0)


def test_the_access_token_never_travels_the_link_beyond_loopback(daemon):
    """The link has no TLS: a link_address off this machine takes the token only over the gRPC stream (TLS)."""
    beyond = "192.0.2.10:9"  # TEST-NET-1: nothing answers there
    module = RemoteModule(daemon.address, name="left", deadline_s=2, transport="link", credentials=daemon.credentials,
                          link_address=beyond)
    with pytest.raises(ModuleError, match=f"^site left at {daemon.address}: the access token would travel to the "
                                          f"step link at {beyond} in clear text"):
        module.open(Session(0.01, ("x1", "x2")))
    module.disconnect()
    auto = RemoteModule(daemon.address, name="left", deadline_s=5, credentials=daemon.credentials, link_address=beyond)
    auto.describe()
    fifty_steps_give_k_d(auto)
    assert auto.steps_on == "stream"


def test_a_site_with_every_link_connection_taken_answers_unavailable_and_serves_once_one_is_free():
    server = SiteServer(lambda: LinearModule.from_config(CONFIG), "busy")
    try:
        module = RemoteModule(server.address, name="busy", deadline_s=1.0, transport="link")
        module.open(Session(0.01, ("x1", "x2")))
        address = link.link_address(module.describe().info)
        taken = [LinkConnection(address, None, "", timeout_s=5) for _ in range(8)]
        start, retries = time.monotonic(), module.stats["wire_retries"]
        with pytest.raises(ModuleError, match=f"^site busy at {server.address}: execute of step 0: UNAVAILABLE: "
                                              "site busy serves at most 8 step link connections at once"):
            module.propose(0, Command(0.0, np.array([1e-3, 0.0])))
            module.execute(0)
        assert time.monotonic() - start < 1.0 + 0.3  # retried within the deadline, as gRPC's UNAVAILABLE is
        assert module.stats["wire_retries"] - retries >= 3
        taken.pop().close()
        module.propose(0, Command(0.0, np.array([1e-3, 0.0])))
        assert list(module.execute(0).force) == pytest.approx([2.0, -1.0], abs=1e-12)
        for connection in taken:
            connection.close()
        module.close()
        module.disconnect()
    finally:
        server.stop(0)


def test_a_site_with_mutual_tls_and_a_token_serves_no_link_its_clients_take_the_stream(tmp_path):
    """The link cannot check client certificates: the token alone must not let in a client without one."""
    make_certificates(tmp_path, ["left"], tokens=True)
    token = (tmp_path / "left.token").read_text().strip()
    tls = ["--tls-cert", tmp_path / "left.crt", "--tls-key", tmp_path / "left.key", "--tls-ca", tmp_path / "ca.crt"]
    client = ClientCredentials(ca=(tmp_path / "ca.crt").read_bytes(), certificate=(tmp_path / "coordinator.crt")
                               .read_bytes(), private_key=(tmp_path / "coordinator.key").read_bytes(), token=token)
    with LocalDaemon("linear", CONFIG, name="left", site_args=[*tls, "--token-file", tmp_path / "left.token"],
                     credentials=client) as daemon:
        address = daemon.address
        assert link.INFO_KEY not in RemoteModule(address, credentials=client).describe().info
        with pytest.raises(ModuleError, match="the site serves no step link"):
            RemoteModule(address, name="left", deadline_s=5, transport="link", credentials=client).open(
                Session(0.01, ("x1", "x2")))
        auto = RemoteModule(address, name="left", deadline_s=5, credentials=client)
        auto.describe()
        fifty_steps_give_k_d(auto)
        assert auto.steps_on == "stream"


def test_a_link_connection_that_sends_nothing_is_closed_and_its_client_reconnects_and_resends():
    """Eight clients that vanished (they send nothing) take every slot; the idle timeout frees them, and a
    client whose own connection the site closed meanwhile steps on transparently, each step applied once."""
    server = SiteServer(lambda: LinearModule.from_config(CONFIG), "idle", link_idle_timeout_s=0.3)
    try:
        module = RemoteModule(server.address, name="idle", deadline_s=5.0, transport="link")
        module.open(Session(0.01, ("x1", "x2")))
        module.propose(0, Command(0.0, np.array([1e-3, 0.0])))
        assert list(module.execute(0).force) == pytest.approx([2.0, -1.0], abs=1e-12)
        module.commit(0)
        address = link.link_address(module.describe().info)
        vanished = [LinkConnection(address, None, "", timeout_s=5) for _ in range(7)]  # with the module's: 8
        start = time.monotonic()
        for connection in vanished:
            assert connection._socket.recv(1) == b""  # closed by the site
        assert 0.3 <= time.monotonic() - start < 0.3 + 1.0
        retries = module.stats["wire_retries"]
        module.propose(1, Command(0.01, np.array([0.0, 1e-3])))
        assert list(module.execute(1).force) == pytest.approx([-1.0, 2.0], abs=1e-12)
        assert module.stats["wire_retries"] - retries == 1  # its connection was closed too: one reconnection
        module.commit(1)
        stats = module.close()
        assert (stats["proposed"], stats["executed"], stats["committed"]) == (2, 2, 2)
        module.disconnect()
        for connection in vanished:
            connection.close()
    finally:
        server.stop(0)


def test_accepted_tcp_link_connections_probe_with_keepalive():
    server = SiteServer(lambda: LinearModule.from_config(CONFIG), "alive")
    try:
        address = link.link_address(RemoteModule(server.address).describe().info)
        client = LinkConnection(address, None, "", timeout_s=5)
        (accepted,) = server._link._connections
        assert accepted.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        for name, value in link.KEEPALIVE_S.items():
            if hasattr(socket, name):
                assert accepted.getsockopt(socket.IPPROTO_TCP, getattr(socket, name)) == value
        client.close()
    finally:
        server.stop(0)


def test_a_link_folder_whose_path_holds_spaces_is_offered_and_taken(monkeypatch):
    base = Path(tempfile.mkdtemp(prefix="hs link %20 "))  # short: a Unix socket address holds 107 bytes
    monkeypatch.setattr(tempfile, "tempdir", str(base))  # what tempfile.gettempdir() (TMPDIR) gives the site
    server = SiteServer(lambda: LinearModule.from_config(CONFIG), "spaced")
    try:
        module = RemoteModule(server.address, name="spaced", deadline_s=5)
        unix = link.link_address(module.describe().info, same_machine=True)
        assert unix == f"{link.UNIX}{server._link.unix_path}" and " link %20 " in unix
        fifty_steps_give_k_d(module)
        assert module.steps_on == "link"
    finally:
        server.stop(0)
        shutil.rmtree(base)


def test_a_link_info_of_an_earlier_site_with_a_plain_path_still_reads(tmp_path):
    with socket.socket(socket.AF_UNIX) as unix:
        unix.bind(str(tmp_path / "link.sock"))
        info = {link.INFO_KEY: f"tcp 127.0.0.1:5 unix {tmp_path / 'link.sock'}"}
        assert link.link_address(info, same_machine=True) == f"{link.UNIX}{tmp_path / 'link.sock'}"
        assert link.link_address(info) == "127.0.0.1:5"


def link_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if "-link" in thread.name]


def own_link_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob(f"{LINK_FOLDER_PREFIX}{os.getpid()}-*"))


@pytest.mark.parametrize("taken_by", ["grpc", "link"])
def test_a_site_that_fails_to_start_leaves_no_link_folder_thread_or_health_port(taken_by):
    """A busy gRPC port fails before the link starts; a busy link port after the health server started."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = f"127.0.0.1:{taken.getsockname()[1]}"
        health = f"127.0.0.1:{free_port()}"
        folders, threads = own_link_folders(), link_threads()
        refusal = f"^(--link-listen {busy}: cannot serve the step link there|cannot listen on {busy})"
        with pytest.raises(ModuleError, match=refusal):
            SiteServer(lambda: LinearModule.from_config(CONFIG), "failed", health_listen=health,
                       **({"listen": busy} if taken_by == "grpc" else {"link_listen": busy}))
    assert own_link_folders() == folders and link_threads() == threads
    host, _, port = health.rpartition(":")
    with pytest.raises(ConnectionRefusedError):  # the health server that had started is stopped
        socket.create_connection((host, int(port)), timeout=5).close()
