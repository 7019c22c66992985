"""The latency floor of gRPC on loopback and the coordinator's step time with 1, 2, 4 and 8 site daemons.

    python benchmarks/grpc_echo_and_steps.py [--steps 2000] [--json]

In one run: starts eight `hybridsim site linear` daemons (10 DOFs each) on
127.0.0.1, measures the round trip of a bare unary Echo (p50), then the
coordinator's step (propose + execute at every module in parallel, then
commit, through coordinator.partition and RemoteModule, exactly as a run
does) with 1, 2, 4 and 8 daemons, over the Steps stream and over unary Step
calls, and prints each step time and its ratio to the echo.  The in-process
step (the same modules in the coordinator's process) is the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence

import grpc
import numpy as np

from coordinator.daemons import LocalDaemon
from coordinator.partition import ModuleSlot, Partition
from coordinator.remote import RemoteModule
from hybridsim.v1 import module_pb2 as pb
from hybridsim.v1 import module_pb2_grpc as pb_grpc
from modules.base import Module, Session
from modules.linear import LinearModule

NDOF = 10
COUNTS = (1, 2, 4, 8)
WARMUP = 200


def chain_config(site: int) -> dict[str, object]:
    """A 10-DOF spring chain (k = 1 MN/m) over DOFs of its own."""
    k = 1e6 * (2 * np.eye(NDOF) - np.eye(NDOF, k=1) - np.eye(NDOF, k=-1))
    return {"dofs": [f"s{site}_x{i}" for i in range(NDOF)], "stiffness": k.tolist()}


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_us": 1e6 * statistics.median(ordered), "p90_us": 1e6 * ordered[int(0.9 * len(ordered))],
            "mean_us": 1e6 * statistics.fmean(ordered)}


def timed(calls: int, call: Callable[[int], object]) -> dict[str, float]:
    for i in range(WARMUP):
        call(i)
    samples = []
    for i in range(WARMUP, WARMUP + calls):
        start = time.perf_counter()
        call(i)
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


def echo(address: str, calls: int) -> dict[str, float]:
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.ModuleStub(channel)
        request = pb.EchoRequest(payload=bytes(8 * NDOF))
        return timed(calls, lambda i: stub.Echo(request, timeout=5))


def step_time(modules: Sequence[Module], steps: int) -> dict[str, float]:
    """The coordinator's step over ``modules`` (each on its own DOFs), as coordinator.partition runs it."""
    slots = []
    for n, module in enumerate(modules):
        description = module.describe()
        module.open(Session(1e-3, description.dof_names, run_id="benchmark"))
        slots.append(ModuleSlot(f"site{n}", module, description, np.arange(n * NDOF, (n + 1) * NDOF), "benchmark"))
    partition = Partition(len(modules) * NDOF, slots)
    rng = np.random.default_rng(1)
    displacement = 1e-3 * rng.standard_normal(partition.ndof)

    def one_step(i: int) -> None:
        partition.restoring_force(i, i * 1e-3, displacement)
        partition.commit(i)

    try:
        return timed(steps, one_step)
    finally:
        partition.close()


def measure(steps: int) -> dict[str, object]:
    daemons = [LocalDaemon("linear", chain_config(n), name=f"site{n}", start_timeout_s=180) for n in range(max(COUNTS))]
    try:
        for daemon in daemons:
            daemon.launch()
        addresses = [daemon.start() for daemon in daemons]
        figures: dict[str, object] = {"echo": echo(addresses[0], steps), "steps": {}}
        for count in COUNTS:
            row: dict[str, dict[str, float]] = {
                "in_process": step_time([LinearModule.from_config(chain_config(n)) for n in range(count)], steps)}
            for transport in ("stream", "unary"):
                remotes = [RemoteModule(a, name=f"site{n}", transport=transport) for n, a in enumerate(addresses[:count])]
                row[transport] = step_time(remotes, steps)
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
    floor = figures["echo"]["p50_us"]  # type: ignore[index]
    print(f"{machine}\nbare gRPC echo round trip on loopback: p50 {floor:.0f} us, "
          f"p90 {figures['echo']['p90_us']:.0f} us")  # type: ignore[index]
    print(f"{'daemons':>8}{'path':>12}{'p50 step us':>13}{'p90 us':>9}{'mean us':>9}{'p50 / echo':>12}")
    for count, row in figures["steps"].items():  # type: ignore[union-attr]
        for path, f in row.items():
            print(f"{count:>8}{path:>12}{f['p50_us']:>13.0f}{f['p90_us']:>9.0f}{f['mean_us']:>9.0f}"
                  f"{f['p50_us'] / floor:>12.2f}")


if __name__ == "__main__":
    main()
