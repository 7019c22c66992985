"""Channels: how a remote module's steps travel to its site (see :mod:`.base` for the protocol and its rules).

:data:`CHANNELS` is the table a :class:`~hybridsim.wire.remote.RemoteModule` chooses from by its
``transport``; a new channel is one file here and one line in the table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from hybridsim.wire.channels.base import Channel, Endpoints
from hybridsim.wire.channels.link import LinkChannel
from hybridsim.wire.channels.stream import StreamChannel
from hybridsim.wire.channels.unary import UnaryChannel

Transport = Literal["auto", "stream", "unary", "link"]
"""how a remote module's steps travel: a channel of :data:`CHANNELS`, or "auto" (the link to a site on this
machine, else the stream)"""

CHANNELS: dict[str, Callable[[Endpoints], Channel]] = {
    "stream": StreamChannel,
    "unary": UnaryChannel,
    "link": LinkChannel,
}
