"""`hybridsim network --to HOST:PORT --path KEY=VALUE,...`: an emulated network path in front of any TCP server.

For a client that hybridsim does not start: OpenSees' genericClient element or OpenFresco's ShadowExpSite in
front of a site's --openfresco port, UI-SIMCOR in front of its --simcor port, another coordinator.  It
listens on 127.0.0.1:PORT (--port, default a free one, printed), forwards every connection to --to across the
path (latency, jitter, loss as TCP resends: docs/realtime.md), and on SIGINT or SIGTERM prints what crossed it.
A coordinator's own modules take a `network` table (or `hybridsim run --network`) instead.
"""

from __future__ import annotations

import argparse
import signal
from typing import Any

from hybridsim.coordinator.errors import UsageError


def register(sub: Any) -> None:
    parser = sub.add_parser("network", help="an emulated network path (latency, jitter, loss) in front of a TCP "
                                            "server", description=__doc__)
    parser.add_argument("--to", required=True, metavar="HOST:PORT", help="the server the path leads to")
    parser.add_argument("--port", type=int, default=0, help="listen on 127.0.0.1:PORT (default: a free port)")
    parser.add_argument("--path", required=True, metavar="KEY=VALUE,...",
                        help="the path's keys, as a module's network table: round_trip_s, jitter_s, loss, "
                             "retransmit_s, seed (e.g. round_trip_s=0.02,jitter_s=0.002)")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from hybridsim.coordinator.interrupts import interrupted_once, stop_point
    from hybridsim.coordinator.network import network_of, parse_option
    from hybridsim.coordinator.ports import BUSY, in_use
    from hybridsim.modules.config_schema import ConfigError
    from hybridsim.wire.network import NetworkEmulator

    try:
        name, table = parse_option(args.path, "--path")
        if name is not None:
            raise UsageError(f"--path {args.path}: give the path's keys only (no module name)")
        network = network_of(table, "--path")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: give a port from 0 to 65535")
    if in_use(f"127.0.0.1:{args.port}"):
        raise UsageError(f"--port {args.port}: {BUSY}")
    with NetworkEmulator(network) as emulator:
        try:
            address = emulator.route(args.to, args.port)
        except (ValueError, OSError) as exc:
            raise UsageError(f"--to {args.to} / --port {args.port}: {exc}") from None
        print(f"hybridsim network: {address} -> {args.to} across {network.describe()}", flush=True)
        try:
            with interrupted_once():
                while True:
                    signal.pause()
                    stop_point()
        except KeyboardInterrupt:
            pass
        counters = emulator.stats()
    print(f"hybridsim network: {counters['network_segments']:.0f} segments crossed, "
          f"{counters['network_lost_segments']:.0f} lost and resent (longest wait "
          f"{1e3 * counters['network_max_resend_wait_s']:.0f} ms)", flush=True)
    return 0
