"""`hybridsim certs --out DIR SITE [SITE ...]`: a test CA and the certificates of a set of sites.

Writes into DIR (created if needed):

    ca.crt, ca.key                 the test CA (keep ca.key away from the sites)
    SITE.crt, SITE.key             each site's server certificate, for the names
                                   SITE, localhost and 127.0.0.1
    coordinator.crt, .key          the coordinator's client certificate
    SITE.token                     with --tokens: an access token per site

A site serves mutual TLS with `hybridsim site ... --tls-cert SITE.crt --tls-key
SITE.key --tls-ca ca.crt`; the experiment's module table gets
`tls = { ca = "ca.crt", cert = "coordinator.crt", key = "coordinator.key" }`.
Keys and tokens are written readable by their owner only.  The CA is for
tests and emulations: a lab's production certificates come from its own CA.
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import os
import re
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from hybridsim.coordinator.errors import UsageError

_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
_RESERVED = {"ca"}


def register(sub: Any) -> None:
    parser = sub.add_parser("certs", help="create a test CA and TLS certificates for a set of sites",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sites", nargs="+", metavar="SITE", help="site host names (as the coordinator reaches them)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder to write the files into")
    parser.add_argument("--client", default="coordinator", metavar="NAME",
                        help="name of the client certificate (default: %(default)s)")
    parser.add_argument("--days", type=int, default=365, help="validity of every certificate (default: %(default)s)")
    parser.add_argument("--tokens", action="store_true", help="also write an access token SITE.token per site")
    parser.add_argument("--force", action="store_true", help="replace files that exist already")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    written = make_certificates(args.out, args.sites, client=args.client, days=args.days, tokens=args.tokens,
                                force=args.force)
    print(f"hybridsim certs: wrote {len(written)} files into {args.out}: {', '.join(p.name for p in written)}")
    return 0


def make_certificates(out: Path, sites: Sequence[str], client: str = "coordinator", days: int = 365,
                      tokens: bool = False, force: bool = False) -> list[Path]:
    """Create the test CA, one server certificate per site and the client certificate in ``out``; the files."""
    _check_names(sites, client, days)
    files = ["ca.crt", "ca.key", *(f"{n}.{e}" for n in (*sites, client) for e in ("crt", "key"))]
    files += [f"{site}.token" for site in sites] if tokens else []
    existing = [name for name in files if (out / name).exists()]
    if existing and not force:
        raise UsageError(f"--out: {out} already holds {existing[0]}; pass --force to replace it, or choose another folder")
    out.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hybridsim test CA")])
    ca = _builder(ca_name, ca_name, ca_key.public_key(), days).add_extension(
        x509.BasicConstraints(ca=True, path_length=0), critical=True).add_extension(
        x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True).sign(
        ca_key, hashes.SHA256())
    _write(out / "ca.crt", ca.public_bytes(serialization.Encoding.PEM), secret=False)
    _write(out / "ca.key", _pem_key(ca_key), secret=True)
    for name in sites:
        names = [x509.DNSName(name), x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        _issue(out, name, ca, ca_key, days, ExtendedKeyUsageOID.SERVER_AUTH, names)
    _issue(out, client, ca, ca_key, days, ExtendedKeyUsageOID.CLIENT_AUTH, [x509.DNSName(client)])
    if tokens:
        for site in sites:
            _write(out / f"{site}.token", f"{secrets.token_urlsafe(32)}\n".encode(), secret=True)
    return [out / name for name in files]


def _check_names(sites: Sequence[str], client: str, days: int) -> None:
    for name in (*sites, client):
        if not _NAME.match(name) or name.lower() in _RESERVED:
            raise UsageError(f"SITE: {name!r} is not a usable host name (letters, digits, '-' and '.'; not 'ca')")
    if len(set(sites)) != len(sites) or client in sites:
        raise UsageError(f"SITE: the names {', '.join(sites)} and --client {client} must all differ")
    if not 1 <= days <= 3650:
        raise UsageError(f"--days: give 1 to 3650 days, not {days}")


def _builder(subject: x509.Name, issuer: x509.Name, public_key: Any, days: int) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False))


def _issue(out: Path, name: str, ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, days: int,
           usage: x509.ObjectIdentifier, alt_names: list[x509.GeneralName]) -> None:
    """A leaf certificate for ``name`` with one extended key usage (server or client), signed by the CA."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    certificate = (_builder(subject, ca.subject, key.public_key(), days)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False),
                                  critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
                   .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                                  critical=False)
                   .sign(ca_key, hashes.SHA256()))
    _write(out / f"{name}.crt", certificate.public_bytes(serialization.Encoding.PEM), secret=False)
    _write(out / f"{name}.key", _pem_key(key), secret=True)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write(path: Path, data: bytes, secret: bool) -> None:
    """Write ``data``; a secret (key, token) readable by its owner only."""
    mode = 0o600 if secret else 0o644
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
    os.chmod(path, mode)
