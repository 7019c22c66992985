"""Real site daemons with mutual TLS or an access token: who is refused, and a run that gets through.

Every daemon is a `hybridsim site` process on 127.0.0.1 started by LocalDaemon; the certificates come
from `hybridsim certs`.  Each refused client is followed by a check that the site did nothing for it
(no session, no step) and still serves the right client.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.cli.certs import make_certificates
from hybridsim.wire.credentials import ClientCredentials
from hybridsim.wire.daemons import LocalDaemon
from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.experiment import load_experiment
from hybridsim.wire.remote import RemoteModule
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.v1 import module_pb2 as pb
from hybridsim.wire.contract import Command, ModuleError, Session
from tests.conftest import MARTHS_DATA
from tests.coordinator.test_remote_frame import shortened

CONFIG = {"dofs": ["x1", "x2"], "stiffness": [[2000.0, -1000.0], [-1000.0, 2000.0]]}
K_SDOF = 39478.417604357434  # N/m: 1 Hz with 1000 kg


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    """The experiment's certificates and tokens, and in other/ those of another CA."""
    folder = tmp_path_factory.mktemp("pki")
    make_certificates(folder, ["story1"], tokens=True)
    make_certificates(folder / "other", ["story1"], tokens=True)
    return folder


def credentials(pki: Path, ca: str = "ca.crt", client: str | None = "coordinator", token: str | None = None):
    pair = {} if client is None else {"certificate": (pki / f"{client}.crt").read_bytes(),
                                      "private_key": (pki / f"{client}.key").read_bytes()}
    return ClientCredentials(ca=None if ca is None else (pki / ca).read_bytes(), **pair,
                             token=None if token is None else (pki / token).read_text().strip())


def mtls_args(pki: Path) -> list[str]:
    return ["--tls-cert", pki / "story1.crt", "--tls-key", pki / "story1.key", "--tls-ca", pki / "ca.crt"]


@pytest.fixture(scope="module")
def mtls_site(pki):
    with LocalDaemon("linear", CONFIG, name="story1", site_args=mtls_args(pki), credentials=credentials(pki)) as site:
        yield site


@pytest.fixture(scope="module")
def token_site(pki):
    with LocalDaemon("linear", CONFIG, name="story1", site_args=["--token-file", pki / "story1.token"],
                     credentials=ClientCredentials(token=(pki / "story1.token").read_text().strip())) as site:
        yield site


def three_steps(address: str, creds: ClientCredentials) -> dict[str, float]:
    """A session of three steps; K d checked by hand; the site's counters."""
    module = RemoteModule(address, name="story1", deadline_s=5, credentials=creds)
    module.open(Session(0.01, module.describe().dof_names))
    for n in range(3):
        module.propose(n, Command(0.01 * n, np.array([1e-3 * n, 0.0])))
        assert module.execute(n).force == pytest.approx([2.0 * n, -1.0 * n])
        module.commit(n)
    stats = module.close()
    module.disconnect()
    return stats


def refused(address: str, creds: ClientCredentials | None, deadline_s: float = 0.5) -> str:
    module = RemoteModule(address, name="story1", deadline_s=deadline_s, credentials=creds)
    with pytest.raises(ModuleError) as info:
        module.open(Session(0.01, ("x1", "x2")))
    module.disconnect()
    return str(info.value)


def sessions_opened(site: LocalDaemon) -> int:
    return site.log_path.read_text().count(" opened by ")


def test_mutual_tls_refuses_every_client_without_a_certificate_of_the_ca(pki, mtls_site):
    address = mtls_site.address
    before = sessions_opened(mtls_site)
    closed = "Socket closed; a site that serves TLS closes the connection of a plaintext client and of a client whose"
    clients = {
        "plaintext": (None, closed),
        "TLS without a client certificate": (credentials(pki, client=None), closed),
        "a certificate of another CA": (credentials(pki / "other", ca="../ca.crt"), closed),
        "the site's own server certificate": (credentials(pki, client="story1"), closed),
        "a client that does not trust the site": (credentials(pki, ca="other/ca.crt"), "the site's certificate is "
                                                   "not trusted: "),
    }
    for label, (creds, message) in clients.items():
        text = refused(address, creds)
        assert text.startswith(f"site story1 at {address}: open: ") and message in text, label
    assert "unable to get local issuer certificate" in refused(address, clients["a client that does not trust the site"][0])
    log = mtls_site.log_path.read_text()
    # the handshakes the site refused, in its log (gRPC's TLS layer names the reason)
    assert "PEER_DID_NOT_RETURN_A_CERTIFICATE" in log and "unsupported certificate purpose" in log
    assert sessions_opened(mtls_site) == before
    stats = three_steps(address, credentials(pki))
    assert (stats["executed"], stats["committed"]) == (3, 3)
    print(f"mTLS site: {len(clients) + 1} refused clients, then 3 steps of the right client")


def test_a_token_site_refuses_a_missing_or_wrong_token_on_every_rpc(pki, token_site):
    address = token_site.address
    before = sessions_opened(token_site)
    assert refused(address, None) == (
        f"site story1 at {address}: open: UNAUTHENTICATED: site story1 needs an access token: send "
        "'authorization: Bearer TOKEN' (token_file in the experiment's module table)")
    wrong = credentials(pki / "other", ca=None, client=None, token="story1.token")
    assert refused(address, wrong) == (f"site story1 at {address}: open: UNAUTHENTICATED: site story1 refused the "
                                       "access token: it is not this site's token")
    # every method of every service, in every call shape, with raw bytes the parser would refuse
    methods = [f"/hybridsim.v1.Module/{m}" for m in pb.DESCRIPTOR.services_by_name["Module"].methods_by_name]
    methods += ["/grpc.health.v1.Health/Check", "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"]
    codes = {}
    with grpc.insecure_channel(address) as channel:
        for method in methods:
            for metadata in ((), (("authorization", "Bearer " + "x" * 43),), (("authorization", ""),)):
                if method.endswith(("/Steps", "/ServerReflectionInfo")):
                    call = channel.stream_stream(method)(iter([b"\xff\x01", b""]), timeout=5, metadata=metadata)
                    with pytest.raises(grpc.RpcError) as info:
                        list(call)
                elif method.endswith("/Records"):
                    with pytest.raises(grpc.RpcError) as info:
                        list(channel.unary_stream(method)(b"\xff\x01", timeout=5, metadata=metadata))
                else:
                    with pytest.raises(grpc.RpcError) as info:
                        channel.unary_unary(method)(b"\xff\x01", timeout=5, metadata=metadata)
                codes[method, metadata] = info.value.code()
        watch = channel.unary_stream("/grpc.health.v1.Health/Watch")(
            health_pb2.HealthCheckRequest().SerializeToString(), timeout=5)
        with pytest.raises(grpc.RpcError) as info:
            next(watch)
        codes["Watch"] = info.value.code()
    assert set(codes.values()) == {grpc.StatusCode.UNAUTHENTICATED} and len(codes) == 3 * len(methods) + 1
    assert sessions_opened(token_site) == before
    log = token_site.log_path.read_text()  # who knocked, for the lab: each refusal names the caller's address
    assert "site story1: /hybridsim.v1.Module/Open from ipv4:127.0.0.1:" in log and "refused (wrong token)" in log
    stats = three_steps(address, ClientCredentials(token=(pki / "story1.token").read_text().strip()))
    assert (stats["executed"], stats["committed"]) == (3, 3)
    print(f"token site: {len(codes) + 2} refused calls, then 3 steps of the right client")


EXPERIMENT = """
[experiment]
name = "sdof_secured"
dt = 0.01
[structure]
dofs = ["x"]
mass_diagonal = [1000.0]
damping = {{ rayleigh_omega = [6.283185307179586, 62.83185307179586], zeta = 0.05 }}
influence = [1.0]
[ground_motion]
file = "{motion}"
scale = 0.4
[integrator]
kind = "alpha-os"
alpha = -0.05
[[modules]]
name = "column"
kind = "linear"
config = {{ dofs = ["x"], stiffness = [[{k}]] }}
{where}
[output]
file = "out.h5"
"""


@pytest.mark.parametrize("access", ["mutual TLS", "mutual TLS and token", "token"])
def test_a_run_through_a_secured_site_equals_the_in_process_run_and_stores_no_secret(pki, tmp_path, access):
    if access.startswith("mutual TLS"):
        site_args, creds = mtls_args(pki), credentials(pki)
        keys = 'tls = { ca = "pki/ca.crt", cert = "pki/coordinator.crt", key = "pki/coordinator.key" }'
        secrets = [(pki / "coordinator.key").read_bytes().splitlines()[1]]
        if access.endswith("token"):
            site_args += ["--token-file", pki / "story1.token"]
            creds = credentials(pki, token="story1.token")
            keys += '\ntoken_file = "pki/story1.token"'
            secrets.append((pki / "story1.token").read_bytes().strip())
    else:
        site_args, creds = ["--token-file", pki / "story1.token"], credentials(pki, ca=None, client=None,
                                                                               token="story1.token")
        keys = 'token_file = "pki/story1.token"'
        secrets = [(pki / "story1.token").read_bytes().strip()]
    (tmp_path / "pki").symlink_to(pki)
    motion = MARTHS_DATA / "ground_motion_elcentro.csv"
    config = {"dofs": ["x"], "stiffness": [[K_SDOF]]}
    with LocalDaemon("linear", config, name="column", site_args=site_args, credentials=creds) as site:
        path = tmp_path / "secured.toml"
        path.write_text(EXPERIMENT.format(motion=motion, k=K_SDOF, where=f'address = "{site.address}"\n{keys}'))
        remote = run_experiment(shortened(load_experiment(path), duration_s=5.0), output=tmp_path / "secured.h5")
    plain = tmp_path / "plain.toml"
    plain.write_text(EXPERIMENT.format(motion=motion, k=K_SDOF, where=""))
    in_process = run_experiment(shortened(load_experiment(plain), duration_s=5.0), output=tmp_path / "plain.h5")
    assert remote.summary["steps"] == 500 and remote.summary["modules"]["column"]["committed"] >= 500
    scale = np.max(np.abs(in_process.displacement))
    assert scale > 1e-3 and np.max(np.abs(remote.displacement - in_process.displacement)) <= 1e-12 * scale
    stored = (tmp_path / "secured.h5").read_bytes()
    assert keys.encode() in stored and not any(secret in stored for secret in secrets)
    print(f"{access}: {remote.summary['steps']} steps over the secured wire")


def test_an_experiment_refuses_a_token_in_clear_text_beyond_loopback_and_tls_on_a_local_daemon(pki, tmp_path):
    (tmp_path / "pki").symlink_to(pki)
    path = tmp_path / "e.toml"
    motion = MARTHS_DATA / "ground_motion_elcentro.csv"
    cases = {
        'address = "lab.example.org:50051"\ntoken_file = "pki/story1.token"':
            "modules[0].token_file: the token would travel to lab.example.org:50051 in clear text; add tls = "
            "{ ca = \"ca.crt\" } (the CA of the site's certificate), or reach the site through a tunnel on 127.0.0.1",
        'address = "local"\ntls = { ca = "pki/ca.crt" }':
            "modules[0].tls: TLS and tokens are for a site at host:port; this module runs as a local daemon on loopback",
        'address = "lab:1"\ntls = { ca = "pki/ca.crt", cert = "pki/coordinator.crt" }':
            "modules[0].tls: cert and key go together: give both or neither",
        'address = "lab:1"\ntls = { ca = "pki/ca.crt", cert = "pki/coordinator.crt", key = "pki/story1.key" }':
            f"modules[0].tls.key: {tmp_path}/pki/story1.key is not the key of the certificate given by "
            "modules[0].tls.cert",
        'address = "lab:1"\ntls = { ca = "pki/story1.key" }':
            f"modules[0].tls.ca: {tmp_path}/pki/story1.key is not a PEM certificate (-----BEGIN CERTIFICATE-----; "
            "hybridsim certs writes them)",
        'address = "127.0.0.1:1"\ntoken_file = "pki/none.token"':
            f"modules[0].token_file: cannot read {tmp_path}/pki/none.token: No such file or directory",
    }
    for keys, message in cases.items():
        path.write_text(EXPERIMENT.format(motion=motion, k=K_SDOF, where=keys))
        with pytest.raises(UsageError) as info:
            load_experiment(path)
        assert str(info.value) == message


def test_mutual_tls_crosses_an_emulated_network_and_a_token_in_clear_text_does_not(pki, mtls_site):
    """Through the network's proxy on 127.0.0.1 the site's certificate is still checked against the site's own
    address; a plaintext token to a site beyond loopback stays refused whatever proxy is in between."""
    from hybridsim.wire.network import Network

    module = RemoteModule(mtls_site.address, name="story1", deadline_s=10, credentials=credentials(pki),
                          network=Network(0.005, seed=1))
    module.open(Session(0.01, ("x1", "x2")))
    module.propose(1, Command(0.01, np.array([1e-3, 0.0])))
    assert module.execute(1).force == pytest.approx([2.0, -1.0])
    assert module.close()["network_segments"] > 0
    module.disconnect()
    far = RemoteModule("192.0.2.1:50051", name="far", deadline_s=1, credentials=credentials(pki, ca=None, client=None,
                                                                                            token="story1.token"),
                       network=Network(0.005))
    with pytest.raises(ModuleError, match="the access token would travel to 192.0.2.1:50051 in clear text"):
        far.describe()
    far.disconnect()


@pytest.mark.parametrize("keys", ["", 'token_file = "pki/other/story1.token"'])
def test_a_token_missing_or_wrong_is_refused_before_anything_moves_in_one_line(pki, tmp_path, token_site, keys,
                                                                                capsys):
    """A module table without the site's token (or with another site's) is a configuration mistake: exit 2 and one
    line naming the module and the fix, not a stopped run (exit 1)."""
    (tmp_path / "pki").symlink_to(pki)
    path = tmp_path / "e.toml"
    path.write_text(EXPERIMENT.format(motion=MARTHS_DATA / "ground_motion_elcentro.csv", k=K_SDOF,
                                      where=f'address = "{token_site.address}"\n{keys}'))
    assert main(["run", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    fix = ("its token_file holds another token: give the file of this site's own token" if keys else
           'give it the site\'s access token: token_file = "FILE" in its [[modules]] table (docs/security.md)')
    assert err.splitlines() == [err] and f"module 'column' (daemon at {token_site.address}): the site refused" in err, err
    assert fix in err and "UNAUTHENTICATED" in err, err
    assert not (tmp_path / "out.h5").exists()
