"""Who may command a site: mutual TLS, an access token, and where a site without either may listen.

A site is reached in one of three ways (docs/security.md):

mutual TLS (``--tls-cert --tls-key --tls-ca``)
    the site presents its certificate and accepts only clients whose
    certificate the CA signed (the TLS handshake refuses the others); any
    listening address.
access token (``--token-file``)
    every call and stream carries ``authorization: Bearer TOKEN``, compared in
    constant time; a call without it, or with another token, is refused with
    UNAUTHENTICATED before its message is even parsed.  Over TLS
    (``--tls-cert --tls-key``) on any address; over plaintext only on
    loopback, where it keeps out the machine's other users and processes
    (across a network the token would travel in clear text).
neither
    loopback only, unless ``--insecure`` says that the network is trusted
    (e.g. a compose network between containers).

Both ends read their files here: the site (hybridsim.coordinator.cli.site) and the
coordinator (hybridsim.wire.credentials).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from hybridsim.wire import codec

log = logging.getLogger("hybridsim.site")

TOKEN_MIN_CHARS = 32
"""shortest access token accepted (``hybridsim certs --tokens`` writes 43 characters, 256 bits)"""

MAX_CREDENTIAL_BYTES = 64 * 1024
"""largest certificate, key or token file read"""


class CredentialError(ValueError):
    """A certificate, key or token file that cannot be used; the message names the option and the file."""


def is_loopback(address: str) -> bool:
    """True when the host of HOST:PORT is a loopback address (127.0.0.0/8, ::1) or ``localhost``."""
    host = address.rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# -- reading the files ----------------------------------------------------------
def _read(path: Path, option: str) -> bytes:
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_CREDENTIAL_BYTES + 1)
    except OSError as exc:
        raise CredentialError(f"{option}: cannot read {path}: {exc.strerror}") from None
    if len(data) > MAX_CREDENTIAL_BYTES:
        raise CredentialError(f"{option}: {path} is larger than {MAX_CREDENTIAL_BYTES // 1024} KiB; "
                              "give a PEM file or a token file")
    return data


def _loose(path: Path, option: str) -> None:
    """Say on stderr that a key or token file may be read by other users (as the monitor's token file is refused:
    a site's key or token may sit on a volume whose modes the site does not choose)."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        print(f"hybridsim: warning: {option}: {path} may be read by other users (mode {mode:04o}); "
              f"chmod 600 {path}", file=sys.stderr, flush=True)


def read_certificate(path: Path, option: str) -> bytes:
    """The PEM certificate(s) of ``path``, checked to parse."""
    data = _read(path, option)
    try:
        x509.load_pem_x509_certificates(data)
    except ValueError:
        raise CredentialError(f"{option}: {path} is not a PEM certificate "
                              "(-----BEGIN CERTIFICATE-----; hybridsim certs writes them)") from None
    return data


def read_private_key(path: Path, option: str, certificate: bytes, certificate_option: str) -> bytes:
    """The PEM private key of ``path``, checked to parse and to belong to ``certificate``."""
    data = _read(path, option)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise CredentialError(f"{option}: {path} is not an unencrypted PEM private key "
                              "(-----BEGIN PRIVATE KEY-----; hybridsim certs writes them)") from None
    public = x509.load_pem_x509_certificates(certificate)[0].public_key()
    raw = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(*raw) != public.public_bytes(*raw):
        raise CredentialError(f"{option}: {path} is not the key of the certificate given by {certificate_option}")
    _loose(path, option)
    return data


def read_token(path: Path, option: str) -> str:
    """The access token in ``path`` (its first line, without surrounding blanks)."""
    lines = _read(path, option).decode("utf-8", errors="replace").strip().splitlines()
    token = lines[0].strip() if lines else ""
    if len(token) < TOKEN_MIN_CHARS or not token.isascii() or not token.isprintable() or " " in token:
        raise CredentialError(f"{option}: {path} must hold one token of at least {TOKEN_MIN_CHARS} printable "
                              "ASCII characters without spaces (hybridsim certs --tokens writes one per site)")
    _loose(path, option)
    return token


# -- the site's side ------------------------------------------------------------
@dataclass(frozen=True)
class SiteTLS:
    """The site's certificate and key (PEM) and, for mutual TLS, the CA its clients' certificates come from."""

    certificate: bytes
    private_key: bytes = field(repr=False)
    client_ca: bytes | None = None

    @classmethod
    def from_files(cls, cert: Path, key: Path, ca: Path | None) -> "SiteTLS":
        certificate = read_certificate(cert, "--tls-cert")
        return cls(certificate, read_private_key(key, "--tls-key", certificate, "--tls-cert"),
                   None if ca is None else read_certificate(ca, "--tls-ca"))

    def server_credentials(self) -> grpc.ServerCredentials:
        return grpc.ssl_server_credentials([(self.private_key, self.certificate)], root_certificates=self.client_ca,
                                           require_client_auth=self.client_ca is not None)


@dataclass(frozen=True)
class SiteAccess:
    """How a site authenticates its clients: TLS (mutual when ``tls.client_ca``), a token, or neither."""

    tls: SiteTLS | None = None
    token: str | None = field(default=None, repr=False)
    insecure: bool = False
    """serve without authentication beyond loopback (a trusted private network)"""

    @property
    def mode(self) -> str:
        """The access mode in words, for the site's log."""
        parts = [] if self.tls is None else ["mutual TLS" if self.tls.client_ca else "TLS"]
        parts += ["access token"] if self.token else []
        return ", ".join(parts) or "no authentication"

    def listen_refusal(self, listen: str) -> str | None:
        """Why this site may not serve on ``listen`` (HOST:PORT) as configured; None when it may."""
        if self.insecure and (self.tls is not None or self.token):
            return "--insecure is for a site without TLS or a token; drop it (TLS and tokens serve on any address)"
        if self.tls is not None and self.tls.client_ca is None and not self.token:
            return ("--tls-cert without --tls-ca authenticates no client: give --tls-ca CA.crt (clients then need a "
                    "certificate that CA signed) or --token-file")
        if self.tls is not None or self.insecure or is_loopback(listen):
            return None
        if self.token:
            return (f"--listen {listen}: a token without TLS is accepted on loopback only (it would cross the network "
                    "in clear text); add --tls-cert/--tls-key, or listen on 127.0.0.1 behind a tunnel")
        return (f"--listen {listen}: a site without TLS or a token serves on loopback only; give --tls-cert/--tls-key/"
                "--tls-ca (hybridsim certs makes them) or --token-file, or --insecure on a trusted private network")

    def interceptors(self, site: str) -> tuple[grpc.ServerInterceptor, ...]:
        return () if not self.token else (TokenGuard(self.token, site),)


def _digest(text: str) -> bytes:
    """SHA-256 of ``text``: comparing digests in constant time reveals neither the token nor its length."""
    return hashlib.sha256(text.encode("utf-8", errors="replace")).digest()


class TokenGuard(grpc.ServerInterceptor):
    """Refuses, with UNAUTHENTICATED, every call whose ``authorization`` metadata is not ``Bearer TOKEN``.

    The refusal happens before the request is parsed: an unauthenticated
    client's bytes never reach the protobuf parser or the module.
    """

    def __init__(self, token: str, site: str) -> None:
        self._expected = _digest(codec.bearer(token))
        self.site = site
        self.refused = 0

    def intercept_service(self, continuation: Callable[[Any], Any], handler_call_details: Any) -> Any:
        presented = None
        for key, value in handler_call_details.invocation_metadata or ():
            if key == codec.TOKEN_KEY:
                presented = value if isinstance(value, str) else value.decode("latin-1")
        if presented is not None and hmac.compare_digest(_digest(presented), self._expected):
            return continuation(handler_call_details)
        self.refused += 1
        if presented is None:
            message = (f"site {self.site} needs an access token: send 'authorization: Bearer TOKEN' "
                       "(token_file in the experiment's module table)")
        else:
            message = f"site {self.site} refused the access token: it is not this site's token"
        method, reason = handler_call_details.method, "no token" if presented is None else "wrong token"
        return _refusing(continuation(handler_call_details), message, lambda peer: log.warning(
            "site %s: %s from %s refused (%s)", self.site, method, peer, reason))


def _refusing(handler: grpc.RpcMethodHandler | None, message: str,
              logged: Callable[[str], None]) -> grpc.RpcMethodHandler:
    """A handler of the same shape as ``handler`` that aborts with UNAUTHENTICATED without parsing the request, after
    ``logged`` is given the caller's address (the site's log names who knocked)."""
    def abort(request: Any, context: grpc.ServicerContext) -> Any:
        logged(context.peer())
        context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    streams = (False, False) if handler is None else (handler.request_streaming, handler.response_streaming)
    make = {(False, False): grpc.unary_unary_rpc_method_handler, (False, True): grpc.unary_stream_rpc_method_handler,
            (True, False): grpc.stream_unary_rpc_method_handler, (True, True): grpc.stream_stream_rpc_method_handler}
    return make[streams](abort)
