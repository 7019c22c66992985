"""Where a module runs: the one starter table that the coordinator and an experimental site share.

A module runs in one of three places, chosen by its ``address``:

========================  =====================================================================
``address``               the starter
========================  =====================================================================
absent (None)             ``in process``: built here by the caller's ``build`` (the wire imports
                          no module kind; the coordinator passes its registry, a site its lab)
``"local"``               ``local daemon``: ``hybridsim site KIND`` started on 127.0.0.1 with a
                          private token (:class:`~hybridsim.wire.daemons.LocalDaemon`), reached
                          by a :class:`~hybridsim.wire.remote.RemoteModule`, stopped at the end
``"HOST:PORT"``           ``address``: a site that runs already, reached by a RemoteModule
                          with the placement's credentials
========================  =====================================================================

Both remote places take the placement's ``transport`` (``auto``, ``link``, ``stream`` or ``unary``:
:mod:`hybridsim.wire.channels`), ``deadline_s`` and ``network`` (an emulated path: :mod:`hybridsim.wire.network`).  Starting is in two phases so that several
daemons boot in parallel: :func:`launch` every placement first (a local daemon's process starts),
then call what it returned with the in-process builder (a daemon is waited for, a remote module is
made).  Whatever a starter starts is closed by the caller's :class:`contextlib.ExitStack`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from hybridsim.wire.channels import Transport
from hybridsim.wire.credentials import ClientCredentials
from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.network import Network
from hybridsim.wire.remote import RemoteModule

M = TypeVar("M")

LOCAL = "local"
"""the address of a local daemon"""


class Placement(Protocol):
    """A module and where it runs (the coordinator's ModuleSpec is one; :class:`Place` is another)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def config(self) -> Mapping[str, Any]: ...
    @property
    def base_dir(self) -> Path | None: ...
    @property
    def address(self) -> str | None: ...
    @property
    def deadline_s(self) -> float: ...
    @property
    def transport(self) -> Transport: ...
    @property
    def credentials(self) -> ClientCredentials | None: ...
    @property
    def network(self) -> Network | None: ...


@dataclass(frozen=True)
class Place:
    """A :class:`Placement` of its own (for a module that is not in an experiment file: a site's plant)."""

    name: str
    kind: str
    config: Mapping[str, Any] = field(default_factory=dict)
    base_dir: Path | None = None
    address: str | None = None
    deadline_s: float = 10.0
    transport: Transport = "auto"
    credentials: ClientCredentials | None = None
    network: Network | None = None


Start = Callable[[Callable[[], M]], "tuple[M | RemoteModule, str]"]
"""what :func:`launch` returns: given the in-process builder, the started module and where it runs"""


def _in_process(placement: Placement, stack: contextlib.ExitStack) -> Start[Any]:
    return lambda build: (build(), "in process")


def _local_daemon(placement: Placement, stack: contextlib.ExitStack) -> Start[Any]:
    daemon = LocalDaemon(placement.kind, placement.config, base_dir=placement.base_dir, name=placement.name,
                         private=True)
    stack.callback(daemon.stop)
    daemon.launch()

    def start(build: Callable[[], Any]) -> tuple[RemoteModule, str]:
        address = daemon.start()
        return _remote(placement, address, daemon.credentials, stack), f"local daemon at {address}"
    return start


def _at_address(placement: Placement, stack: contextlib.ExitStack) -> Start[Any]:
    address = str(placement.address)
    return lambda build: (_remote(placement, address, placement.credentials, stack), f"daemon at {address}")


def _remote(placement: Placement, address: str, credentials: ClientCredentials | None,
            stack: contextlib.ExitStack) -> RemoteModule:
    module = RemoteModule(address, name=placement.name, deadline_s=placement.deadline_s,
                          transport=placement.transport, credentials=credentials, network=placement.network)
    stack.callback(module.disconnect)
    return module


STARTERS: dict[str, Callable[[Placement, contextlib.ExitStack], Start[Any]]] = {
    "in process": _in_process,
    "local daemon": _local_daemon,
    "address": _at_address,
}


def starter_of(address: str | None) -> str:
    """The key of :data:`STARTERS` for a placement's ``address``."""
    return "in process" if address is None else "local daemon" if address == LOCAL else "address"


def launch(placement: Placement, stack: contextlib.ExitStack) -> Start[Any]:
    """Begin starting ``placement`` (a local daemon's process starts); call the result with the in-process builder."""
    return STARTERS[starter_of(placement.address)](placement, stack)


def start(placement: Placement, stack: contextlib.ExitStack, build: Callable[[], M]) -> tuple[M | RemoteModule, str]:
    """The module of ``placement`` and where it runs ("in process", "local daemon at ...", "daemon at ...")."""
    return launch(placement, stack)(build)
