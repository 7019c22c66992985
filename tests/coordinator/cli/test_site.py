"""`hybridsim site`: bad input gives exit code 2 and one line naming the option and the fix."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.cli.certs import make_certificates
from hybridsim.wire.remote import RemoteModule
from hybridsim.wire import link
from hybridsim.wire.contract import Command, Session
from tests.conftest import free_port


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "left.toml"
    path.write_text('dofs = ["x"]\nstiffness = [[1.0]]\n')
    return path


def error_of(capsys, *argv: str) -> str:
    assert main(["site", *argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    return lines[0]


def test_an_unknown_kind_names_the_known_ones(capsys, config):
    line = error_of(capsys, "nosuch", "--config", str(config), "--listen", "127.0.0.1:0")
    assert line.startswith("hybridsim site: error: unknown module kind 'nosuch'; known kinds: ")
    assert "linear" in line


def test_a_missing_or_unreadable_config(capsys, tmp_path):
    line = error_of(capsys, "linear", "--config", str(tmp_path / "none.toml"))
    assert line == f"hybridsim site: error: --config: cannot read {tmp_path / 'none.toml'}: No such file or directory"
    bad = tmp_path / "bad.toml"
    bad.write_text("dofs = [")
    assert error_of(capsys, "linear", "--config", str(bad)).startswith(f"hybridsim site: error: --config: {bad} is not valid TOML")
    other = tmp_path / "site.yaml"
    other.write_text("dofs: [x]")
    assert error_of(capsys, "linear", "--config", str(other)) == \
        f"hybridsim site: error: --config: {other} must be a .toml or .json file"


def test_a_bad_config_table_is_the_module_s_own_message(capsys, tmp_path):
    path = tmp_path / "left.json"
    path.write_text('{"dofs": ["x", "y"], "stiffness": [[1.0]]}')
    assert error_of(capsys, "linear", "--config", str(path)) == (
        f"hybridsim site: error: site left (linear, {path}): linear module: stiffness must be 2x2 (one row per DOF), "
        "got shape (1, 1)")


def test_a_bad_listen_address_or_a_port_in_use(capsys, config):
    assert error_of(capsys, "linear", "--config", str(config), "--listen", "50051") == \
        "hybridsim site: error: --listen: give HOST:PORT (e.g. 127.0.0.1:50051 or 0.0.0.0:0), not '50051'"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = error_of(capsys, "linear", "--config", str(config), "--listen", f"127.0.0.1:{port}")
    assert line.startswith(f"hybridsim site: error: site left (linear, {config}): cannot listen on 127.0.0.1:{port}")


@pytest.mark.parametrize("mib", ["-1", "0", "2048", "inf", "nan"])
def test_a_message_size_that_would_lift_the_limit_or_overflow_grpc_s_count_is_refused(capsys, config, mib):
    """-1 MiB would have served with no limit (gRPC takes a negative size for none); 2048 MiB is 2^31 bytes, past the
    signed 32-bit count gRPC keeps; inf and nan ended in a traceback."""
    assert error_of(capsys, "linear", "--config", str(config), "--listen", "127.0.0.1:0", "--max-message-mib", mib) == \
        f"hybridsim site: error: --max-message-mib {float(mib):g}: give a size above 0 and below 2048 (MiB; default 4)"


def test_a_port_in_use_is_one_line_on_standard_error(config):
    """Whatever gRPC's core would log: the whole of what the site prints (another process, its stderr read)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for option in ("--listen", "--openfresco"):
            listen = f"127.0.0.1:{port}" if option == "--listen" else "127.0.0.1:0"
            extra = [] if option == "--listen" else ["--openfresco", f"127.0.0.1:{port}"]
            done = subprocess.run([sys.executable, "-m", "hybridsim", "site", "linear", "--config", str(config),
                                   "--listen", listen, *extra], capture_output=True, text=True, timeout=120)
            assert (done.returncode, done.stdout) == (2, "")
            assert done.stderr == (f"hybridsim site: error: site left (linear, {config}): cannot listen on "
                                   f"127.0.0.1:{port} ({option}): another program listens there; give another port, "
                                   "or port 0 for a free one\n")


def test_describe_config_imports_no_signal_or_linear_algebra_library():
    """`--describe-config` reads declarations: scipy's signal, linalg and stats (0.9 s and more of imports on this
    machine) stay out, for every kind."""
    code = ("import sys, contextlib, io\nfrom hybridsim.coordinator.cli import main\nfrom hybridsim.modules.registry "
            "import KINDS\nfor kind in KINDS:\n    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        assert main(['site', kind, '--describe-config']) == 0\n"
            "print(sorted(m for m in ('scipy.signal', 'scipy.linalg', 'scipy.stats') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "left.token"
    path.write_text("t" * 43 + "\n")
    path.chmod(0o600)  # as hybridsim certs --tokens writes it (a looser one is warned)
    return path


NO_AUTH = ("a site without TLS or a token serves on loopback only; give --tls-cert/--tls-key/--tls-ca (hybridsim certs "
           "makes them) or --token-file, or --insecure on a trusted private network")


@pytest.mark.parametrize("listen", ["0.0.0.0:50051", "[::]:0", "192.0.2.10:0", "lab.example.org:50051"])
def test_a_site_without_tls_or_a_token_refuses_to_listen_beyond_loopback(capsys, config, listen):
    assert error_of(capsys, "linear", "--config", str(config), "--listen", listen) == \
        f"hybridsim site: error: --listen {listen}: {NO_AUTH}"


def test_a_token_over_plaintext_is_refused_beyond_loopback(capsys, config, token_file):
    assert error_of(capsys, "linear", "--config", str(config), "--listen", "0.0.0.0:0", "--token-file",
                    str(token_file)) == (
        "hybridsim site: error: --listen 0.0.0.0:0: a token without TLS is accepted on loopback only (it would cross "
        "the network in clear text); add --tls-cert/--tls-key, or listen on 127.0.0.1 behind a tunnel")


def test_contradictory_or_incomplete_access_options_name_the_fix(capsys, config, token_file, tmp_path):
    base = ["linear", "--config", str(config), "--listen", "127.0.0.1:0"]
    cases = {
        ("--insecure", "--token-file", str(token_file)):
            "--insecure is for a site without TLS or a token; drop it (TLS and tokens serve on any address)",
        ("--tls-cert", str(config)):
            "--tls-cert and --tls-key go together: give both (hybridsim certs writes SITE.crt and SITE.key)",
        ("--tls-ca", str(config)): "--tls-ca needs --tls-cert and --tls-key: the site's own certificate and key",
        ("--tls-cert", str(config), "--tls-key", str(config)):
            f"--tls-cert: {config} is not a PEM certificate (-----BEGIN CERTIFICATE-----; hybridsim certs writes them)",
        ("--token-file", str(config)):
            f"--token-file: {config} must hold one token of at least 32 printable ASCII characters without spaces "
            "(hybridsim certs --tokens writes one per site)",
        ("--health-listen", "0.0.0.0:50052"):
            f"site left (linear, {config}): --health-listen 0.0.0.0:50052: the plaintext health port serves on "
            "loopback only (e.g. 127.0.0.1:50052)",
    }
    for options, message in cases.items():
        assert error_of(capsys, *base, *options) == f"hybridsim site: error: {message}"


def test_tls_without_a_client_ca_needs_a_token(capsys, config, tmp_path):
    make_certificates(tmp_path / "pki", ["left"])
    assert error_of(capsys, "linear", "--config", str(config), "--tls-cert", str(tmp_path / "pki" / "left.crt"),
                    "--tls-key", str(tmp_path / "pki" / "left.key")) == (
        "hybridsim site: error: --tls-cert without --tls-ca authenticates no client: give --tls-ca CA.crt (clients "
        "then need a certificate that CA signed) or --token-file")


def started_site(config: Path, tmp_path: Path, *options: str) -> tuple[subprocess.Popen, int]:
    """`hybridsim site linear` as a process with ``options``, once it has written its port file."""
    process = subprocess.Popen([Path(sys.executable).with_name("hybridsim"), "site", "linear", "--config", config,
                                "--port-file", tmp_path / "port", *options],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(1500):
        if (tmp_path / "port").exists() or process.poll() is not None:
            break
        time.sleep(0.02)
    if not (tmp_path / "port").exists():
        process.kill()
        raise AssertionError(f"the site did not start: {process.communicate()[1]}")
    return process, int((tmp_path / "port").read_text())


def test_insecure_serves_beyond_loopback_and_the_health_port_answers_without_credentials(config, tmp_path):
    health_port = free_port()
    process, port = started_site(config, tmp_path, "--listen", "0.0.0.0:0", "--insecure",
                                 "--health-listen", f"127.0.0.1:{health_port}")
    try:
        for address in (f"127.0.0.1:{port}", f"127.0.0.1:{health_port}"):
            with grpc.insecure_channel(address) as channel:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service="hybridsim.v1.Module"), timeout=10)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
        with grpc.insecure_channel(f"127.0.0.1:{health_port}") as channel:
            with pytest.raises(grpc.RpcError) as info:  # the health port serves health alone
                channel.unary_unary("/hybridsim.v1.Module/Echo")(b"", timeout=10)
        assert info.value.code() is grpc.StatusCode.UNIMPLEMENTED
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=10)
    assert process.returncode == 0
    assert f"listening on 0.0.0.0:{port} (no authentication), health on 127.0.0.1:{health_port}" in err


def test_a_burst_of_stop_signals_stops_the_site_cleanly_and_removes_its_link_folder(config, tmp_path):
    """The signal handler takes no lock the main thread may hold (an Event.set() in a handler deadlocks when the
    signal lands inside the same Event's wait): a burst of SIGTERM and SIGINT stops the site with exit code 0."""
    process, port = started_site(config, tmp_path, "--listen", "127.0.0.1:0")
    try:
        module = RemoteModule(f"127.0.0.1:{port}", name="left", deadline_s=10)
        unix = link.link_address(module.describe().info, same_machine=True)
        module.disconnect()
        assert unix is not None and unix.startswith(link.UNIX)
        folder = Path(unix.removeprefix(link.UNIX)).parent
        assert folder.is_dir()
        for n in range(200):
            try:
                process.send_signal(signal.SIGINT if n % 2 else signal.SIGTERM)
            except ProcessLookupError:
                break
        out, err = process.communicate(timeout=4)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0, err
    assert "stopped after 0 session(s)" in err
    assert not folder.exists()


def test_a_bad_refused_or_busy_link_listen_address_names_the_option(capsys, config):
    site = ("linear", "--config", str(config), "--listen", "127.0.0.1:0")
    assert error_of(capsys, *site, "--link-listen", "50052") == \
        "hybridsim site: error: --link-listen: give HOST:PORT (e.g. 127.0.0.1:50051 or 0.0.0.0:0) or none, not '50052'"
    assert error_of(capsys, *site, "--link-listen", "0.0.0.0:0").startswith(
        f"hybridsim site: error: site left (linear, {config}): --link-listen 0.0.0.0:0: the step link has no TLS, "
        "it serves on loopback only unless the network is trusted (--insecure)")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = error_of(capsys, *site, "--link-listen", f"127.0.0.1:{port}")
    assert line.startswith(f"hybridsim site: error: site left (linear, {config}): --link-listen 127.0.0.1:{port}: "
                           "cannot serve the step link there")


@pytest.mark.parametrize("link_listen", ["port", "none"])
def test_link_listen_sets_the_step_link_s_address_or_serves_none(config, tmp_path, link_listen):
    address = f"127.0.0.1:{free_port()}" if link_listen == "port" else "none"
    process, port = started_site(config, tmp_path, "--listen", "127.0.0.1:0", "--link-listen", address)
    try:
        info = RemoteModule(f"127.0.0.1:{port}", deadline_s=10).describe().info
        if link_listen == "none":
            assert link.INFO_KEY not in info
        else:
            assert link.link_address(info) == address
            module = RemoteModule(f"127.0.0.1:{port}", name="left", deadline_s=10, transport="link",
                                  link_address=address)
            module.open(Session(0.01, ("x",)))
            module.propose(0, Command(0.0, np.array([0.25])))
            assert list(module.execute(0).force) == [0.25]  # stiffness 1 N/m: the force is the displacement
            module.close()
            module.disconnect()
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=10)
    assert process.returncode == 0, err
    assert ("step link on" in err) is (link_listen == "port")


@pytest.mark.parametrize("protocol", ["--openfresco", "--simcor", "--generic-tcp"])
def test_a_protocol_port_beside_a_token_is_refused_at_start(capsys, config, tmp_path, protocol):
    """No lab protocol carries a credential: its port would let any local process command a token-protected site."""
    token = tmp_path / "site.token"
    token.write_text("t" * 43 + "\n")
    token.chmod(0o600)
    line = error_of(capsys, "linear", "--config", str(config), "--listen", "127.0.0.1:0", protocol, "127.0.0.1:0",
                    "--token-file", str(token))
    assert line.startswith(f"hybridsim site: error: {protocol} with --token-file: the site asks its gRPC clients for "
                           "a credential and this protocol carries none")


def test_a_protocol_port_beside_mutual_tls_is_refused_at_start(capsys, config, tmp_path):
    """The same with the other credential, a client certificate of the site's CA."""
    make_certificates(tmp_path / "pki", ["left"])
    pki = tmp_path / "pki"
    line = error_of(capsys, "linear", "--config", str(config), "--listen", "127.0.0.1:0", "--simcor", "127.0.0.1:0",
                    "--tls-cert", str(pki / "left.crt"), "--tls-key", str(pki / "left.key"), "--tls-ca",
                    str(pki / "ca.crt"))
    assert line.startswith("hybridsim site: error: --simcor with --tls-ca: the site asks its gRPC clients for a "
                           "credential and this protocol carries none")


@pytest.mark.parametrize("key", ["increment", "velocity", "start"])
def test_a_gate_value_of_the_wrong_length_names_the_key(capsys, tmp_path, key):
    site = Path(__file__).parents[3] / "examples" / "setups" / "one_actuator_site.toml"
    path = tmp_path / "site.toml"
    path.write_text(site.read_text().replace("[backend.plant]", f"[gate]\n{key} = [0.001, 0.002]\n\n[backend.plant]",
                                             1))
    line = error_of(capsys, "experimental", "--config", str(path), "--listen", "127.0.0.1:0")
    assert line.endswith(f"gate.{key}: the setup has 1 actuator: give one value for all of them or one per actuator, "
                         "not 2"), line
