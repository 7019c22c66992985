"""`hybridsim certs`: a CA and certificates that an independent X.509 check accepts, keys for their owner only."""

from __future__ import annotations

import ipaddress
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.verification import PolicyBuilder, Store

from hybridsim.coordinator.cli import main


def error_of(capsys, *argv: str) -> str:
    assert main(["certs", *argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    return lines[0]


def certificate(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_the_sites_and_the_coordinator_get_certificates_that_chain_to_the_ca(tmp_path, capsys):
    assert main(["certs", "--out", str(tmp_path), "story1", "lab.example.org", "--tokens"]) == 0
    assert capsys.readouterr().out.startswith(f"hybridsim certs: wrote 10 files into {tmp_path}: ca.crt, ca.key, ")
    store = Store([certificate(tmp_path / "ca.crt")])
    for site in ("story1", "lab.example.org"):
        leaf = certificate(tmp_path / f"{site}.crt")
        # the verifier of the cryptography package (RFC 5280 path validation, SAN match, serverAuth EKU)
        for name in (x509.DNSName(site), x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))):
            chain = PolicyBuilder().store(store).build_server_verifier(name).verify(leaf, [])
            assert chain[-1].subject == certificate(tmp_path / "ca.crt").subject
        with pytest.raises(Exception, match="(?i)no matching|mismatch"):
            PolicyBuilder().store(store).build_server_verifier(x509.DNSName("other")).verify(leaf, [])
        assert leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value == x509.ExtendedKeyUsage(
            [ExtendedKeyUsageOID.SERVER_AUTH])
    client = certificate(tmp_path / "coordinator.crt")
    verified = PolicyBuilder().store(store).build_client_verifier().verify(client, [])
    assert verified.subjects == [x509.DNSName("coordinator")]
    for name in ("ca", "story1", "lab.example.org", "coordinator"):
        key = serialization.load_pem_private_key((tmp_path / f"{name}.key").read_bytes(), None)
        assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1"
        assert certificate(tmp_path / f"{name}.crt").public_key() == key.public_key()
        assert stat.S_IMODE((tmp_path / f"{name}.key").stat().st_mode) == 0o600
        assert stat.S_IMODE((tmp_path / f"{name}.crt").stat().st_mode) == 0o644
    tokens = [(tmp_path / f"{site}.token").read_text().strip() for site in ("story1", "lab.example.org")]
    assert len(set(tokens)) == 2 and all(len(t) == 43 for t in tokens)  # 32 random bytes, URL-safe base64
    assert stat.S_IMODE((tmp_path / "story1.token").stat().st_mode) == 0o600


def test_existing_files_are_kept_unless_forced(tmp_path, capsys):
    assert main(["certs", "--out", str(tmp_path), "story1"]) == 0
    first = (tmp_path / "ca.key").read_bytes()
    assert error_of(capsys, "--out", str(tmp_path), "story1") == (
        f"hybridsim certs: error: --out: {tmp_path} already holds ca.crt; pass --force to replace it, or choose "
        "another folder")
    assert (tmp_path / "ca.key").read_bytes() == first
    assert main(["certs", "--out", str(tmp_path), "story1", "--force"]) == 0
    assert (tmp_path / "ca.key").read_bytes() != first


@pytest.mark.parametrize("argv, message", [
    (["bad name"], "SITE: 'bad name' is not a usable host name (letters, digits, '-' and '.'; not 'ca')"),
    (["ca"], "SITE: 'ca' is not a usable host name (letters, digits, '-' and '.'; not 'ca')"),
    (["a", "a"], "SITE: the names a, a and --client coordinator must all differ"),
    (["coordinator"], "SITE: the names coordinator and --client coordinator must all differ"),
    (["a", "--days", "0"], "--days: give 1 to 3650 days, not 0"),
])
def test_bad_names_and_validity_are_refused(tmp_path, capsys, argv, message):
    assert error_of(capsys, "--out", str(tmp_path / "certs"), *argv) == f"hybridsim certs: error: {message}"
    assert not (tmp_path / "certs").exists()
