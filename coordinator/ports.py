"""Whether a TCP address is taken, asked before a gRPC server binds it.

gRPC's core logs a failed bind on the process's standard error itself (``E... add_port.cc ...``) before the
server can say anything; a bind checked first turns a busy port into the one line a user gets for any bad input.
"""

from __future__ import annotations

import errno
import socket

BUSY = "another program listens there; give another port, or port 0 for a free one"
"""what a user is told of a port in use, after the option and the address"""


def in_use(address: str) -> bool:
    """Whether another socket listens on ``address`` (HOST:PORT; port 0 is never in use): a bind with address
    reuse, as gRPC binds, fails so.  A host that does not resolve is not in use (the server says what is wrong)."""
    host, _, port = address.rpartition(":")
    if int(port) == 0:
        return False
    try:
        family, kind, proto, _, where = socket.getaddrinfo(host.strip("[]"), int(port), type=socket.SOCK_STREAM)[0]
    except OSError:
        return False
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(where)
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False
