"""UI-SIMCOR's LabView1/LabView2 protocols: a client written here from the message format steps a hybridsim
site, the `simcor` module kind drives it from `hybridsim run`, and bad lines are refused."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from tests.interop.helpers import CONTROL_POINTS, K, LINEAR, building, port_of, relative, site

pytestmark = pytest.mark.timeout(300)


def simcor_site(tmp_path, protocol: str, **extra):
    return site(tmp_path, "linear", {**LINEAR, **extra, "simcor": {"control_points": CONTROL_POINTS,
                                                                   "protocol": protocol}}, "simcor")


class Client:
    """UI-SIMCOR's side, from the message format: one tab-separated line per message."""

    def __init__(self, lab) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port_of(lab.addresses["simcor"])), timeout=10.0)
        self.file = self.socket.makefile("rb")

    def ask(self, *tokens: object, replies: int = 1) -> list[list[str]]:
        self.socket.sendall(("\t".join(str(t) for t in tokens) + "\r\n").encode())
        return [self.file.readline().decode().rstrip("\n").split("\t") for _ in range(replies)]

    def close(self) -> None:
        self.file.close()
        self.socket.close()


def values(tokens: list[str]) -> dict[str, float]:
    return {f"{tokens[i]} {tokens[i + 1]}": float(tokens[i + 2]) for i in range(0, len(tokens), 3)}


@pytest.mark.parametrize("protocol", ["LabView1", "LabView2"])
def test_a_client_written_from_the_format_steps_a_linear_site_and_reads_k_d(tmp_path, protocol):
    with simcor_site(tmp_path, protocol) as lab:
        client = Client(lab)
        assert client.ask("open-session", "UI-SIMCOR")[0][:2] == ["OK", "0"]
        assert client.ask("set-parameter", "UI-SIMCOR", "nstep", 3)[0][0] == "OK"
        for step, d in enumerate(([1.0e-3, 3.0e-3], [-2.5e-3, 1.0 / 3.0 * 1e-3]), start=1):
            tid = f"trans20261202{step:02d}"
            proposed = ["MDL-00-01", "x", "displacement", f"{d[0]:.10e}", "MDL-00-02", "x", "displacement",
                        f"{d[1]:.10e}"]  # UI-SIMCOR's own format
            reply = client.ask("propose", tid, *proposed)[0]
            assert reply[:3] == ["OK", "0", tid]
            if protocol == "LabView1":
                assert reply[3] == "propose accepted"
                assert client.ask("execute", tid)[0] == ["OK", "0", tid, "execute done"]
                lines = client.ask("get-control-point", tid, "MDL-00-01", "MDL-00-02", replies=2)
                assert [line[:4] for line in lines] == [["OK", "0", tid, "MDL-00-01"], ["OK", "0", tid, "MDL-00-02"]]
                read = {**values(lines[0][4:]), **values(lines[1][4:])}
            else:
                assert reply[3] == "MDL-00-01" and reply[10] == "MDL-00-02"
                read = {**values(reply[4:10]), **values(reply[11:])}
            expected = np.array(K) @ [float(f"{v:.10e}") for v in d]
            assert read["x displacement"] == pytest.approx(float(f"{d[1]:.10e}"), rel=1e-15)
            assert read["x force"] == pytest.approx(expected[1], rel=1e-12)
            # what UI-SIMCOR sends (10 digits after the point) is what moved: K d of the exact d agrees to ~1e-10
            assert read["x force"] == pytest.approx((np.array(K) @ d)[1], rel=1e-9)
        assert client.ask("close-session", "UI-SIMCOR")[0][0] == "OK"
        client.close()
        text = lab.wait_log("close-session")
    assert "proposed 2, executed 2, committed 1" in text  # no commit on the wire: a propose commits the step before


BAD_LINES = {
    "propose\tT1\tMDL-00-01\tx\tdisplacement\t1e-3": "no value for MDL-00-02 axis x",
    "propose\tT1\tMDL-00-09\tx\tdisplacement\t1e-3": "unknown control point 'MDL-00-09'",
    "propose\tT1\tMDL-00-01\ty\tdisplacement\t1e-3\tMDL-00-02\tx\tdisplacement\t0": "has no axis y",
    "propose\tT1\tMDL-00-01\tx\tforce\t10\tMDL-00-02\tx\tdisplacement\t0": "force control is not supported",
    "propose\tT1\tMDL-00-01\tx\tdisplacement\tabc\tMDL-00-02\tx\tdisplacement\t0": "'abc' is not a number",
    "propose\tT1\tMDL-00-01\tx\tdisplacement": "needs a quantity and a value",
    "execute\tT9": "execute of transaction 'T9'",
    "get-control-point\tT9\tMDL-00-01": "it was not executed",
    "launch\tT1": "unknown command 'launch'",
}


def test_bad_lines_are_answered_not_ok_and_the_session_goes_on(tmp_path):
    with simcor_site(tmp_path, "LabView1") as lab:
        client = Client(lab)
        assert client.ask("propose", "T0", "MDL-00-01", "x", "displacement", 0)[0][:2] == ["NOT OK", "0"]
        client.ask("open-session", "S")
        for line, reason in BAD_LINES.items():
            reply = client.ask(line)[0]
            assert reply[:2] == ["NOT OK", "0"] and reason in reply[3], (line, reply)
        ok = client.ask("propose", "T1", "MDL-00-01", "x", "displacement", 1e-3, "MDL-00-02", "x", "displacement", 0)
        assert ok[0][0] == "OK"
        client.close()
        for raw in (b"propose\tT2\tMDL-00-01\tx\tdisplacement\t1e-3", b"open-session\t\xff\xfe\n"):
            with socket.create_connection(("127.0.0.1", port_of(lab.addresses["simcor"])), timeout=10.0) as c:
                c.sendall(raw)  # a line cut off by a client that goes away; a line that is not ASCII
                c.shutdown(socket.SHUT_WR)
                assert c.makefile("rb").read() in (b"", b"NOT OK\t0\t\tthe line is not ASCII text\n")
        text = lab.wait_log("in the middle of a line")
        assert "the line is not ASCII text" in text
        client = Client(lab)  # still serving
        assert client.ask("open-session", "S")[0][0] == "OK"
        client.close()


def test_a_limit_refusal_is_not_ok_with_the_reason_and_ends_the_session(tmp_path):
    with simcor_site(tmp_path, "LabView1", limits={"displacement": 2e-3}) as lab:
        client = Client(lab)
        client.ask("open-session", "S")
        reply = client.ask("propose", "T1", "MDL-00-01", "x", "displacement", 5e-3, "MDL-00-02", "x",
                           "displacement", 0)[0]
        assert reply[0] == "NOT OK" and "displacement limit on DOF 'u2'" in reply[3]
        assert client.file.read() == b""  # the session ended and the connection closed
        client.close()


@pytest.mark.parametrize("protocol", ["LabView1", "LabView2"])
def test_the_simcor_kind_steps_a_site_like_the_module_in_process(tmp_path, protocol):
    """`hybridsim run` with a kind = "simcor" module stepping the site gives the in-process response to 1e-12."""
    local = run_experiment(parse_experiment(building(tmp_path, {"kind": "linear", "config": LINEAR}, "local"),
                                            base_dir=tmp_path))
    with simcor_site(tmp_path, protocol) as lab:
        module = {"kind": "simcor", "address": lab.addresses["simcor"],
                  "config": {"dofs": ["u2", "u3"], "control_points": CONTROL_POINTS, "protocol": protocol}}
        remote = run_experiment(parse_experiment(building(tmp_path, module, "simcor"), base_dir=tmp_path))
    assert np.abs(local.displacement).max() > 1e-3
    assert relative(remote.displacement, local.displacement) < 1e-12
    assert relative(remote.restoring_force, local.restoring_force) < 1e-12
