"""`hybridsim monitor COORDINATOR`: serve the live page of a test run with `hybridsim run --monitor`."""

from __future__ import annotations

import argparse
import errno
import sys
from typing import Any

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.ports import BUSY
from hybridsim.coordinator.monitor.service import listen_address
from hybridsim.wire.security import is_loopback
from hybridsim.coordinator.monitor.session import DEFAULT_WEB
from hybridsim.coordinator.monitor.web import MonitorWebServer


def register(sub: Any) -> None:
    parser = sub.add_parser("monitor", help="serve the live monitor page of a running test", description=__doc__)
    parser.add_argument("coordinator", help="HOST:PORT the coordinator's --monitor serves")
    parser.add_argument("--listen", default=DEFAULT_WEB, metavar="HOST:PORT",
                        help=f"where to serve the page (default {DEFAULT_WEB}; port 0 picks a free one)")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    host, _, port = listen_address(args.listen, "--listen").rpartition(":")
    try:
        server = MonitorWebServer((host, int(port)), args.coordinator)
    except OSError as exc:
        why = BUSY if exc.errno == errno.EADDRINUSE else exc.strerror
        raise UsageError(f"--listen {args.listen}: cannot serve there: {why}") from None
    print(f"monitor: watching {args.coordinator}; open {server.url}", file=sys.stderr, flush=True)
    if not is_loopback(f"{host}:{port}"):
        print(f"monitor: {host} is not a loopback address: anyone who reaches it sees the page", file=sys.stderr)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0
