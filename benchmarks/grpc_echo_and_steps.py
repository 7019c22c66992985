"""The latency floor of gRPC on loopback and the coordinator's step time with 1, 2, 4 and 8 site daemons.

    python benchmarks/grpc_echo_and_steps.py [--steps 2000] [--json]

In one run: starts eight `hybridsim site linear` daemons (10 DOFs each) on
127.0.0.1, measures the round trip of a bare unary Echo (p50), then the
coordinator's step (propose + execute at every module in parallel, then
commit, through hybridsim.coordinator.partition and RemoteModule, exactly as a run
does) with 1, 2, 4 and 8 daemons, over the Steps stream and over unary Step
calls, and prints each step time and its ratio to the echo.  The in-process
step (the same modules in the coordinator's process) is the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import platform

import grpc

from hybridsim.coordinator.bench import DAEMON_COUNTS, WARMUP, chain_config, grpc_echo_us, partition_step_us
from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.remote import RemoteModule
from hybridsim.modules.linear import LinearModule




def measure(steps: int) -> dict[str, object]:
    daemons = [LocalDaemon("linear", chain_config(n), name=f"site{n}", start_timeout_s=180) for n in range(max(DAEMON_COUNTS))]
    try:
        for daemon in daemons:
            daemon.launch()
        addresses = [daemon.start() for daemon in daemons]
        figures: dict[str, object] = {"echo_p50_us": grpc_echo_us(addresses[0], steps), "steps": {}}
        for count in DAEMON_COUNTS:
            row: dict[str, float] = {
                "in_process": partition_step_us([LinearModule.from_config(chain_config(n)) for n in range(count)],
                                                steps)}
            for transport in ("stream", "unary"):
                remotes = [RemoteModule(a, name=f"site{n}", transport=transport) for n, a in enumerate(addresses[:count])]
                row[transport] = partition_step_us(remotes, steps)
                for remote in remotes:
                    remote.disconnect()
            figures["steps"][count] = row  # type: ignore[index]
        return figures
    finally:
        for daemon in daemons:
            daemon.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="timed calls per case (after %d warm-up)" % WARMUP)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    figures = measure(args.steps)
    machine = {"machine": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
               "grpc": grpc.__version__, "load_average": os.getloadavg()}
    if args.json:
        print(json.dumps({**machine, **figures}))
        return
    floor = figures["echo_p50_us"]
    print(f"{machine}\nbare gRPC echo round trip on loopback: p50 {floor:.0f} us")
    print(f"{'daemons':>8}{'path':>12}{'p50 step us':>13}{'p50 / echo':>12}")
    for count, row in figures["steps"].items():  # type: ignore[union-attr]
        for path, p50 in row.items():
            print(f"{count:>8}{path:>12}{p50:>13.0f}{p50 / floor:>12.2f}")


if __name__ == "__main__":
    main()
