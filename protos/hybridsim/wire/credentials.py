"""What the coordinator presents to a site: TLS trust and client certificate, access token.

An experiment's module table gives them, with paths relative to the
experiment file (see docs/security.md)::

    [[modules]]
    name = "story1"
    address = "lab1.example.org:50051"
    tls = { ca = "certs/ca.crt", cert = "certs/coordinator.crt", key = "certs/coordinator.key" }
    token_file = "certs/story1.token"     # instead of, or beside, the client certificate

The files are read (and checked) when the experiment is read; the results
file keeps the experiment's table, so it holds the paths, never a key or a
token.  A token never travels in clear text beyond loopback: without ``tls``
the site's address must be a loopback one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from hybridsim.wire import codec
from hybridsim.wire.security import CredentialError, is_loopback, read_certificate, read_private_key, read_token


@dataclass(frozen=True)
class ClientCredentials:
    """TLS roots (the CA of the site's certificate), the client certificate and key, the access token (PEM, text)."""

    ca: bytes | None = None
    """None: plaintext (loopback only when a token is sent)"""
    certificate: bytes | None = None
    private_key: bytes | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)

    @classmethod
    def from_table(cls, tls: Any, token_file: Any, base_dir: Path, where: str,
                   address: str | None) -> "ClientCredentials | None":
        """The credentials of a module table's ``tls`` and ``token_file`` (None when it gives neither).

        The keys' types are the experiment's declaration's (``hybridsim.coordinator.experiment_schema.TLS``); what
        depends on the address or the files raises CredentialError naming the key (``where`` is e.g. "modules[0]").
        """
        if tls is None and token_file is None:
            return None
        key = f"{where}.tls" if tls is not None else f"{where}.token_file"
        if address in (None, "local"):
            raise CredentialError(f"{key}: TLS and tokens are for a site at host:port; this module runs "
                             f"{'in process' if address is None else 'as a local daemon on loopback'}")
        tls = tls or {}
        if token_file is not None and not tls and not is_loopback(address):
            raise CredentialError(f"{where}.token_file: the token would travel to {address} in clear text; add "
                             "tls = { ca = \"ca.crt\" } (the CA of the site's certificate), or reach the site "
                             "through a tunnel on 127.0.0.1")
        ca = None if "ca" not in tls else read_certificate(base_dir / tls["ca"], f"{where}.tls.ca")
        certificate = None if "cert" not in tls else read_certificate(base_dir / tls["cert"], f"{where}.tls.cert")
        private_key = None if certificate is None else read_private_key(
            base_dir / tls["key"], f"{where}.tls.key", certificate, f"{where}.tls.cert")
        token = None if token_file is None else read_token(base_dir / token_file, f"{where}.token_file")
        return cls(ca, certificate, private_key, token)

    def channel(self, address: str, options: Sequence[tuple[str, Any]] = (), site: str | None = None) -> grpc.Channel:
        """A channel to the site at ``address``: TLS when ``ca``, the token on every call and stream.

        ``site``: the site's own HOST:PORT when ``address`` is a proxy in front of it (network emulation): its
        certificate must name the site's host, and a token in clear text is refused unless the site is on loopback."""
        site = site or address
        if self.ca is not None:
            credentials = grpc.ssl_channel_credentials(self.ca, self.private_key, self.certificate)
            if site != address:
                options = [*options, ("grpc.ssl_target_name_override", site.rpartition(":")[0].strip("[]"))]
            channel = grpc.secure_channel(address, credentials, options=list(options))
        elif self.token and not (is_loopback(address) and is_loopback(site)):
            raise ValueError(f"the access token would travel to {site} in clear text; use TLS")
        else:
            channel = grpc.insecure_channel(address, options=list(options))
        return channel if not self.token else grpc.intercept_channel(channel, TokenMetadata(self.token))


class TokenMetadata(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
                    grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Adds ``authorization: Bearer TOKEN`` to the metadata of every call and stream."""

    def __init__(self, token: str) -> None:
        self._entry = (codec.TOKEN_KEY, codec.bearer(token))

    def _with_token(self, details: Any) -> Any:
        return details._replace(metadata=[*(details.metadata or ()), self._entry])

    def intercept_unary_unary(self, continuation: Callable[..., Any], client_call_details: Any, request: Any) -> Any:
        return continuation(self._with_token(client_call_details), request)

    def intercept_unary_stream(self, continuation: Callable[..., Any], client_call_details: Any, request: Any) -> Any:
        return continuation(self._with_token(client_call_details), request)

    def intercept_stream_unary(self, continuation: Callable[..., Any], client_call_details: Any,
                               request_iterator: Iterator[Any]) -> Any:
        return continuation(self._with_token(client_call_details), request_iterator)

    def intercept_stream_stream(self, continuation: Callable[..., Any], client_call_details: Any,
                                request_iterator: Iterator[Any]) -> Any:
        return continuation(self._with_token(client_call_details), request_iterator)
