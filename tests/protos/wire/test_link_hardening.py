"""The step link against a hostile neighbour on the same machine (issue 15 items 3, 4, 9), real site daemons:
slow pre-HELLO clients cannot hold the link's slots, a full link sends the steps on the gRPC stream, a Unix
socket planted by another user never gets the HELLO, and a second coordinator cannot take a site over
unasked.  The hosted module is K = [[2, -1], [-1, 2]] kN/m: d = (1, 0) mm gives (2, -1) N."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hybridsim.wire import link
from hybridsim.wire.channels.link import LinkConnection
from hybridsim.wire.contract import Command, ModuleError, Session
from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.remote import RemoteModule

CONFIG = {"dofs": ["x1", "x2"], "stiffness": [[2000.0, -1000.0], [-1000.0, 2000.0]]}
K = np.array(CONFIG["stiffness"])


def steps(module: RemoteModule, count: int, first: int = 0) -> None:
    """``count`` steps whose forces must be K d."""
    for n in range(first, first + count):
        d = np.array([1e-3 * (n + 1), -5e-4 * n])
        module.propose(n, Command(0.01 * n, d))
        assert module.execute(n).force == pytest.approx(K @ d, rel=1e-12)
        module.commit(n)


class Trickle:
    """A local client that opens a step-link connection and sends one byte of a HELLO every ``pause_s``."""

    def __init__(self, address: str, pause_s: float = 3.0) -> None:
        self.socket = (socket.socket(socket.AF_UNIX) if address.startswith(link.UNIX) else
                       socket.socket(socket.AF_INET))
        target = address.removeprefix(link.UNIX)
        if address.startswith(link.UNIX):
            self.socket.connect(target)
        else:
            host, _, port = target.rpartition(":")
            self.socket.connect((host, int(port)))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(pause_s,), daemon=True)
        self._thread.start()

    def _run(self, pause_s: float) -> None:
        hello = link.hello_frame("not-the-token", "x")
        for byte in hello:
            if self._stop.wait(pause_s):
                return
            try:
                self.socket.send(bytes((byte,)))
            except OSError:
                return

    def closed_by_the_site(self) -> bool:
        """Whether the site has closed the connection (end of stream, a reset, or its refusal and then the end)."""
        self.socket.setblocking(False)
        try:
            while self.socket.recv(4096):
                pass
            return True
        except BlockingIOError:
            return False
        except OSError:
            return True

    def stop(self) -> None:
        self._stop.set()
        self.socket.close()


def test_eight_slow_pre_hello_clients_on_tcp_and_unix_do_not_stop_a_tokened_run():
    with LocalDaemon("linear", CONFIG, name="site", private=True) as daemon:
        module = RemoteModule(daemon.address, name="site", deadline_s=5, credentials=daemon.credentials)
        info = module.describe().info
        addresses = [link.link_address(info), link.link_address(info, same_machine=True)]
        trickles = [Trickle(addresses[i % 2]) for i in range(8)]  # TCP and Unix clients share the slots
        started = time.monotonic()
        try:
            time.sleep(0.5)
            module.open(Session(0.01, ("x1", "x2")))
            assert module.steps_on == "link"
            steps(module, 20)  # the slow clients hold no slot of an authenticated connection
            time.sleep(max(0.0, link.HELLO_TIMEOUT_S + 1.0 - (time.monotonic() - started)))
            # one deadline for the whole HELLO, however slowly it trickles (a byte every 3 s kept it open for ever)
            assert [t.closed_by_the_site() for t in trickles] == [True] * 8
            steps(module, 10, first=20)
        finally:
            for trickle in trickles:
                trickle.stop()
        module.close()
        module.disconnect()


def test_a_full_link_sends_the_steps_on_the_stream():
    with LocalDaemon("linear", CONFIG, name="site", private=True) as daemon:
        # eight authenticated connections of the open session fill the link's slots
        first = RemoteModule(daemon.address, name="site", deadline_s=5, credentials=daemon.credentials)
        first.describe()
        first.open(Session(0.01, ("x1", "x2")))
        steps(first, 1)
        assert first.steps_on == "link"
        session = first._session_id
        address = link.link_address(first.describe().info, same_machine=True)
        connections = [LinkConnection(address, daemon.credentials.token, session, 5.0) for _ in range(7)]
        try:
            late = RemoteModule(daemon.address, name="site", deadline_s=5, credentials=daemon.credentials)
            late.describe()
            late.open(Session(0.01, ("x1", "x2"), takeover=True))
            assert late.steps_on == "link"
            steps(late, 10)  # the link is full: the stream carries the steps, forces K d
            assert "step link session from" in daemon.log_path.read_text()
            assert "refused: too many connections" in daemon.log_path.read_text()
            late.close()
            late.disconnect()
        finally:
            for connection in connections:
                connection.close()


@pytest.mark.skipif(os.getuid() != 0, reason="planting a socket as another user needs root to make that user's files")
def test_a_unix_socket_planted_by_another_user_never_gets_the_hello(tmp_path):
    with LocalDaemon("linear", CONFIG, name="site", private=True) as daemon:
        probe = RemoteModule(daemon.address, name="site", deadline_s=5, credentials=daemon.credentials)
        real = Path(link.link_address(probe.describe().info, same_machine=True).removeprefix(link.UNIX))
        folder = real.parent
        # the attacker (user 65534) owns the folder and serves a socket at the path the site advertises
        real.unlink()
        planted = socket.socket(socket.AF_UNIX)
        planted.bind(str(real))
        planted.listen()
        os.chown(real, 65534, 65534)
        os.chown(folder, 65534, 65534)
        received: list[bytes] = []
        planted.settimeout(0.2)

        def serve() -> None:
            while True:
                try:
                    connection, _ = planted.accept()
                except socket.timeout:
                    continue
                except OSError:
                    return
                received.append(connection.recv(4096))
                connection.close()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            module = RemoteModule(daemon.address, name="site", deadline_s=5, credentials=daemon.credentials)
            module.describe()
            module.open(Session(0.01, ("x1", "x2")))
            assert module.steps_on == "stream"  # auto: the socket's folder is not the site's user's
            steps(module, 5)
            module.close()
            module.disconnect()
            forced = RemoteModule(daemon.address, name="site", deadline_s=2, credentials=daemon.credentials,
                                  transport="link", link_address=link.UNIX + str(real))
            forced.open(Session(0.01, ("x1", "x2"), takeover=True))
            with pytest.raises(ModuleError, match="is served by user 0, not by the owner of its private folder"):
                steps(forced, 1)
            forced.disconnect()
        finally:
            planted.close()
            thread.join(2)
            os.chown(folder, 0, 0)
        assert b"".join(received) == b""  # connected to, then refused: it never saw the token or the session


def test_a_second_coordinator_is_refused_unless_it_asks_to_take_over(tmp_path):
    """A site that moves something (here: one with limits) is exclusive to the coordinator in session."""
    with LocalDaemon("linear", {**CONFIG, "limits": {"displacement": 0.1}}, name="site", private=True) as daemon:
        first = RemoteModule(daemon.address, name="site", deadline_s=5, credentials=daemon.credentials)
        first.describe()
        first.open(Session(0.01, ("x1", "x2"), run_id="first"))
        steps(first, 5)
        second = RemoteModule(daemon.address, name="site", deadline_s=5, credentials=daemon.credentials)
        with pytest.raises(ModuleError, match=r"site site is in the session of run first \(opened by .* s ago\); a "
                                              r"coordinator takes it over only when asked to \(hybridsim run/resume "
                                              r"--takeover\)"):
            second.open(Session(0.01, ("x1", "x2"), run_id="second"))
        steps(first, 5, first=5)  # the first run goes on undisturbed
        second.open(Session(0.01, ("x1", "x2"), run_id="second", takeover=True))
        steps(second, 3)
        with pytest.raises(ModuleError, match="not the open session"):
            steps(first, 1, first=10)
        second.close()
        for module in (first, second):
            module.disconnect()
        log = daemon.log_path.read_text()
    assert "Open from" in log and "refused: session" in log and "taken over by" in log
