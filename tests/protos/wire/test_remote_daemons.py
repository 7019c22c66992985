"""Site daemons as real processes (`hybridsim site` started by LocalDaemon) on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.remote import RemoteModule
from hybridsim.v1 import module_pb2 as pb
from hybridsim.v1 import module_pb2_grpc as pb_grpc
from hybridsim.wire.contract import Command, ModuleError, Session, StepRefused

CONFIG = {"dofs": ["x1", "x2"], "stiffness": [[2000.0, -1000.0], [-1000.0, 2000.0]]}


@pytest.fixture(scope="module")
def daemon():
    with LocalDaemon("linear", CONFIG, name="left") as running:
        yield running


def run_steps(module: RemoteModule, steps: range) -> list[np.ndarray]:
    forces = []
    for n in steps:
        module.propose(n, Command(0.01 * n, np.array([1e-3 * n, 0.0])))
        forces.append(module.execute(n).force)
        module.commit(n)
    return forces


def test_a_local_daemon_serves_health_and_logs_each_session(daemon):
    with grpc.insecure_channel(daemon.address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service="hybridsim.v1.Module"),
                                                          timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    module = RemoteModule(daemon.address, name="left", deadline_s=5)
    module.open(Session(0.01, ("x1", "x2"), run_id="logged"))
    forces = run_steps(module, range(3))
    assert forces[2] == pytest.approx([4.0, -2.0])
    module.close()
    module.disconnect()
    log = daemon.log_path.read_text()
    assert "(run logged, 2 DOFs, dt 0.01 s)" in log
    assert "closed by the coordinator after" in log and "executed 3, committed 3" in log


def test_bad_input_is_refused_with_clear_errors_and_the_daemon_serves_the_next_client(daemon):
    with grpc.insecure_channel(daemon.address) as channel:
        stub = pb_grpc.ModuleStub(channel)
        with pytest.raises(grpc.RpcError) as version:
            stub.Describe(pb.DescribeRequest(version=pb.ProtocolVersion(major=2)), timeout=5)
        with pytest.raises(grpc.RpcError) as malformed:
            channel.unary_unary("/hybridsim.v1.Module/Execute")(b"\x0a\xff", timeout=5)
        huge = pb.EchoRequest(payload=bytes(5 * 2**20)).SerializeToString()
        with pytest.raises(grpc.RpcError) as oversized:
            channel.unary_unary("/hybridsim.v1.Module/Echo")(huge, timeout=5)
    assert version.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "speaks hybridsim protocol 2.0, this end speaks 1.0" in version.value.details()
    assert malformed.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "malformed hybridsim.v1.ExecuteRequest message" in malformed.value.details()
    assert oversized.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    module = RemoteModule(daemon.address, name="left", deadline_s=5)
    module.open(Session(0.01, ("x1", "x2")))
    for bad in ([1.0], [0.0, np.inf]):
        with pytest.raises(StepRefused, match=f"site left at {daemon.address}: displacement has"):
            module.propose(5, Command(0.05, np.array(bad)))
            module.execute(5)
    with pytest.raises(StepRefused, match=f"site left at {daemon.address}: the command's time must be a finite"):
        module.propose(5, Command(np.nan, np.array([0.0, 0.0])))
        module.execute(5)
    assert run_steps(module, range(6, 8))[1] == pytest.approx([14.0, -7.0])
    module.close()


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_killing_a_daemon_mid_run_stops_the_client_within_its_deadline_naming_the_site(transport):
    with LocalDaemon("linear", CONFIG, name="right") as daemon:
        module = RemoteModule(daemon.address, name="right", deadline_s=1.0, transport=transport)
        module.open(Session(0.01, ("x1", "x2")))
        run_steps(module, range(5))
        os.kill(daemon.pid, signal.SIGKILL)
        start = time.monotonic()
        with pytest.raises(ModuleError) as info:
            run_steps(module, range(5, 6))
        assert time.monotonic() - start < 1.0 + 0.3
        assert str(info.value).startswith(f"site right at {daemon.address}: execute of step 5: ")


def test_sigterm_closes_the_open_session_and_stops_the_site(tmp_path: Path):
    config = tmp_path / "left.toml"
    config.write_text('dofs = ["x1", "x2"]\nstiffness = [[2000.0, -1000.0], [-1000.0, 2000.0]]\n')
    port_file = tmp_path / "port"
    process = subprocess.Popen([Path(sys.executable).with_name("hybridsim"), "site", "linear", "--config", config,
                                "--listen", "127.0.0.1:0", "--port-file", port_file],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(500):
            if port_file.exists() or process.poll() is not None:
                break
            time.sleep(0.02)
        address = f"127.0.0.1:{int(port_file.read_text())}"
        module = RemoteModule(address, name="left", deadline_s=5)
        module.open(Session(0.01, ("x1", "x2")))
        run_steps(module, range(2))
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert out == f"hybridsim site left: serving a linear module on {address}\n"
    assert "ended by the site's shutdown after" in err and "stopped after 1 session(s)" in err


def test_a_daemon_exits_with_the_process_that_started_it(tmp_path: Path):
    config = tmp_path / "c.toml"
    config.write_text('dofs = ["x"]\nstiffness = [[1.0]]\n')
    parent = (f"import os, subprocess\n"
              f"child = subprocess.Popen([{str(Path(sys.executable).with_name('hybridsim'))!r}, 'site', 'linear', "
              f"'--config', {str(config)!r}, '--listen', '127.0.0.1:0', '--parent-pid', str(os.getpid())],"
              f" stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
              f"print(child.pid, flush=True)\n")
    pid = int(subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=30).stdout)
    status = Path(f"/proc/{pid}/status")
    deadline = time.monotonic() + 30
    while status.exists() and "State:\tZ" not in status.read_text():
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            pytest.fail("the daemon outlived the process that started it")
        time.sleep(0.05)


def test_a_daemon_that_cannot_start_raises_with_the_end_of_its_log():
    with pytest.raises(ModuleError) as info:
        LocalDaemon("linear", {"dofs": ["x"]}, name="broken").start()
    message = str(info.value)
    assert message.startswith("site broken: the linear daemon exited with code 2 while starting; its log ends: ")
    assert "give exactly one of stiffness or stiffness_file in site 'broken'" in message


def test_daemons_terminated_together_each_stop_cleanly_on_one_sigterm():
    daemons = [LocalDaemon("linear", CONFIG, name=f"pair{n}") for n in range(2)]
    for daemon in daemons:
        daemon.launch()
    for daemon in daemons:
        daemon.start()
    start = time.monotonic()
    for daemon in daemons:
        daemon.terminate()
    assert [daemon.stop() for daemon in daemons] == [0, 0]  # a clean exit, not the SIGKILL after 5 s
    assert time.monotonic() - start < 4.0
