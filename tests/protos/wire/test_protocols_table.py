"""The labs' protocols are one table: each line resolves, the site's options are made from it, and a protocol
added as a folder's server plus one line is served by `hybridsim site` with its own configuration table."""

from __future__ import annotations

import socket
import struct
import sys
import textwrap

import numpy as np
import pytest

from hybridsim.coordinator.cli import build_parser
from hybridsim.modules.registry import CLIENT_KINDS, KINDS, build_module
from hybridsim.registry import resolve
from hybridsim.wire.protocols import PROTOCOLS, LabProtocol, serve_protocols
from hybridsim.wire.server import SiteServer

TOY = textwrap.dedent('''
    """A toy lab protocol: the client sends one float64 displacement, the site answers the restoring force."""
    import struct

    from hybridsim.wire.contract import Command
    from hybridsim.wire.protocols.base import ChannelSession, ProtocolServer, receive


    class ToyServer:
        def __init__(self, servicer, listen, table=None, max_message_bytes=0):
            self.table = table
            self._servicer = servicer
            self._server = ProtocolServer("toy", listen, self._connection)
            self.address, self.port = self._server.address, self._server.port

        def stop(self):
            self._server.stop()

        def _connection(self, connection, peer):
            session = ChannelSession(self._servicer, "toy", peer, self.table["dt"])
            session.open()
            try:
                while (data := receive(connection, 8, "a displacement")) is not None:
                    result = session.propose(Command(session.step * self.table["dt"], [struct.unpack("<d", data)[0]]),
                                             execute=True, commit_first=True)
                    connection.sendall(struct.pack("<d", result.force[0]))
            finally:
                session.close("the toy client left")
''')


@pytest.mark.parametrize("option", sorted(PROTOCOLS))
def test_each_protocol_resolves_and_is_a_site_option(option, capsys):
    protocol = PROTOCOLS[option]
    server = resolve(protocol.server)
    assert callable(getattr(server, "stop", None)), f"{protocol.server} has no stop()"
    assert protocol.client in KINDS and protocol.client in CLIENT_KINDS
    with pytest.raises(SystemExit):
        build_parser("site").parse_args(["site", "--help"])
    assert f"--{option} HOST:PORT" in capsys.readouterr().out


def test_a_protocol_added_by_one_line_is_served_with_its_table(tmp_path, monkeypatch):
    (tmp_path / "toy_protocol.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(PROTOCOLS, "toy", LabProtocol("toy_protocol:ToyServer", "toy", "linear",
                                                      "a toy protocol (one float64 each way)"))
    args = build_parser("site").parse_args(["site", "linear", "--config", "x.toml", "--toy", "127.0.0.1:0"])
    assert args.toy == "127.0.0.1:0"

    k = 4.0e5  # N/m: a linear spring, so the answer is k u
    site = SiteServer(lambda: build_module("linear", {"dofs": ["x"], "stiffness": [[k]]}), "toy-site",
                      link_listen=None)
    try:
        running = serve_protocols(site.servicer, {"toy": "127.0.0.1:0"}, {"toy": {"dt": 0.01}}, 2**20)
        assert running["toy"].table == {"dt": 0.01}
        with socket.create_connection(("127.0.0.1", running["toy"].port), timeout=10.0) as client, \
                client.makefile("rb") as replies:
            forces = []
            for u in (1e-3, 2.5e-3, -4e-3):
                client.sendall(struct.pack("<d", u))
                forces.append(struct.unpack("<d", replies.read(8))[0])
        np.testing.assert_allclose(forces, [k * 1e-3, k * 2.5e-3, -k * 4e-3], rtol=1e-12)
        running["toy"].stop()
    finally:
        site.stop()
        sys.modules.pop("toy_protocol", None)
