"""The operator's service of a site (``hybridsim site-control HOST:PORT [--clear]``): its hold, read or cleared.

Served on the site's own port beside the Module service and behind the same access (mutual TLS, the access
token): a caller without the site's credentials is refused before its request is read, as on every rpc.  A hold
(:class:`hybridsim.modules.limits.Interlock`: a measured overload, a relaxation beyond its threshold) lasts
across sessions, restores and reconnections until this service's ``Clear``, logged with the operator and the
caller's address.  The messages are JSON (no protobuf of their own):

``Status``  ``{}`` -> ``{"site": NAME, "held": REASON or null}``
``Clear``   ``{"operator": NAME}`` -> ``{"site": NAME, "held": null, "cleared": REASON or null}``
``Hold``    ``{"reason": TEXT}`` -> ``{"site": NAME, "held": REASON}``: the coordinator's integrity monitor
            (:mod:`hybridsim.coordinator.integrity.monitor`) holds the site; a hold already set is kept
"""

from __future__ import annotations

import json
import logging
from typing import Any

import grpc

log = logging.getLogger("hybridsim.site")

SERVICE = "hybridsim.SiteControl"


def handler(servicer: Any) -> grpc.GenericRpcHandler:
    """The service's rpcs over ``servicer`` (a :class:`~hybridsim.wire.server.ModuleServicer`)."""

    def status(request: bytes, context: grpc.ServicerContext) -> bytes:
        _parsed(request, context)
        interlock = servicer.interlock()
        return _reply(servicer.site, held=None if interlock is None else interlock.reason)

    def clear(request: bytes, context: grpc.ServicerContext) -> bytes:
        operator = _parsed(request, context).get("operator")
        if not isinstance(operator, str) or not operator.strip() or len(operator) > 200:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "Clear names its operator: {\"operator\": NAME}")
        interlock = servicer.interlock()
        cleared = None if interlock is None else interlock.clear(f"{operator} (site-control from {context.peer()})")
        if cleared is None:
            log.info("site %s: site-control from %s: %s cleared no hold (none was set)", servicer.site,
                     context.peer(), operator)
        return _reply(servicer.site, held=None, cleared=cleared)

    def hold(request: bytes, context: grpc.ServicerContext) -> bytes:
        reason = _parsed(request, context).get("reason")
        if not isinstance(reason, str) or not reason.strip() or len(reason) > 1000:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "Hold gives its reason: {\"reason\": TEXT}")
        interlock = servicer.interlock()
        if interlock is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"site {servicer.site} has no hold to set")
        interlock.hold(reason)
        log.warning("site %s: held by %s: %s", servicer.site, context.peer(), reason)
        return _reply(servicer.site, held=interlock.reason)

    methods = {"Status": status, "Clear": clear, "Hold": hold}
    return grpc.method_handlers_generic_handler(SERVICE, {
        name: grpc.unary_unary_rpc_method_handler(method) for name, method in methods.items()})


def _parsed(request: bytes, context: grpc.ServicerContext) -> dict[str, Any]:
    try:
        data = json.loads(request or b"{}")
    except (ValueError, UnicodeDecodeError):
        data = None
    if not isinstance(data, dict):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a site-control request is a JSON object")
    return data  # type: ignore[return-value]


def _reply(site: str, **fields: Any) -> bytes:
    return json.dumps({"site": site, **fields}).encode()


def call(channel: grpc.Channel, method: str, request: dict[str, Any], timeout_s: float = 10.0) -> dict[str, Any]:
    """One rpc of the service over ``channel``; its JSON reply (grpc.RpcError as the site answers)."""
    stub = channel.unary_unary(f"/{SERVICE}/{method}")
    return json.loads(stub(json.dumps(request).encode(), timeout=timeout_s))  # type: ignore[no-any-return]
