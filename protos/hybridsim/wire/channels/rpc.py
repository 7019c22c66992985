"""gRPC statuses as the contract's errors: shared by the control plane and the gRPC channels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import grpc

from hybridsim.wire import codec
from hybridsim.wire.channels.base import Call, Retry
from hybridsim.wire.contract import AccessRefused

T = TypeVar("T")

TLS_REFUSED = "Tls handshake failed"
"""in the details of a connection whose TLS handshake the client refused (the site's certificate): not retried"""


def call_rpc(rpc: Callable[..., T], request: Any, call: Call, timeout_s: float) -> T:
    """``rpc(request)`` within ``timeout_s`` (s); a failure raised as :func:`rpc_failure` reports it."""
    try:
        return rpc(request, timeout=timeout_s)
    except grpc.RpcError as exc:
        raise rpc_failure(exc, call) from None


def rpc_failure(exc: grpc.RpcError, call: Call) -> Exception:
    """The StepRefused, AccessRefused, ModuleError or Retry (an unreachable site) that reports ``exc``."""
    code, details = exc.code(), exc.details() or ""
    refused = dict(exc.trailing_metadata() or ()).get(codec.REFUSED_STEP_KEY)
    if refused is not None:
        return call.refused(int(refused), details)
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return call.late()
    if code is grpc.StatusCode.UNAUTHENTICATED:
        return AccessRefused(f"{call.where}: {code.name}: {details}")
    if code is grpc.StatusCode.UNAVAILABLE and TLS_REFUSED in details:
        return call.error(f"the site's certificate is not trusted: {details}; tls.ca must be the CA that signed it, "
                          "and the address a name it holds")
    if code is grpc.StatusCode.UNAVAILABLE:
        hint = "" if "Socket closed" not in details else (
            "; a site that serves TLS closes the connection of a plaintext client and of a client whose "
            "certificate it does not accept: check the module's tls table (ca, cert, key)")
        return Retry(call.error(f"site unreachable for {call.deadline_s:g} s: {details}{hint}"))
    return call.error(f"{code.name}: {details}")


def failure_of(exc: BaseException, call: Call) -> BaseException:
    """What a gRPC channel raises for ``exc``: a status translated, a late reply, a lost connection retried."""
    if isinstance(exc, grpc.RpcError):
        return rpc_failure(exc, call)
    if isinstance(exc, TimeoutError):
        return call.late()
    if isinstance(exc, ConnectionError):
        return Retry(call.error(str(exc)))
    return exc

