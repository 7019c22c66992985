"""The wire's floors, the three-process maRTHS loop and the real-time design card, over gRPC and over the step link.

    python benchmarks/wire_speed.py [--calls 2000] [--duration 20] [--skip-realtime] [--json]

Side by side in one run on this machine (p50 of ``--calls`` round trips after a warm-up):

- floors: a raw TCP echo (Python at both ends), the gRPC unary Echo of a site daemon (the sync server)
  and of a grpc.aio server (one event loop, no thread hand-off), with the payload of a 10-DOF step;
- the coordinator's step with one 10-DOF linear daemon over the Steps stream, unary Step calls and the
  step link (hybridsim.wire.link);
- the three-process maRTHS benchmark (loop, experimental-site daemon, plant daemon; Dt = 1/1024 s, one
  control sample per step) with both hops on gRPC streams and on step links: start-up, loop time per
  tick, real-time factor with start-up (as `hybridsim bench` reports it) and without;
- the real-time design card (Dt = 10/1024 s, the site at 1024 Hz: ten site -> plant round trips per step)
  with the plant daemon reached over gRPC and over its step link, and with the plant in the site's
  process: late steps (%), step p50 and p99, the largest lateness.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys

from hybridsim.coordinator.bench import SITE_DOFS, chain_config, grpc_echo_us, partition_step_us, realtime_late_steps, tcp_echo_us
from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.remote import RemoteModule

_AIO_ECHO_SERVER = """
import asyncio, grpc
from hybridsim.v1 import module_pb2 as pb, module_pb2_grpc as pb_grpc

class Echo(pb_grpc.ModuleServicer):
    async def Echo(self, request, context):
        return pb.EchoReply(payload=request.payload)

async def main():
    server = grpc.aio.server()
    pb_grpc.add_ModuleServicer_to_server(Echo(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()

asyncio.run(main())
"""


def aio_server_echo_us(calls: int) -> float:
    """The gRPC Echo round trip to a grpc.aio server in another process (sync client, as the coordinator's)."""
    server = subprocess.Popen([sys.executable, "-c", _AIO_ECHO_SERVER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())  # type: ignore[union-attr]
        return grpc_echo_us(f"127.0.0.1:{port}", calls)
    finally:
        server.kill()
        server.wait()


def floors(calls: int) -> dict[str, float]:
    """Echo floors and the one-daemon coordinator step over each transport (us)."""
    figures = {"tcp_echo": tcp_echo_us(calls), "grpc_aio_server_echo": aio_server_echo_us(calls)}
    with LocalDaemon("linear", chain_config(0, SITE_DOFS), name="site0") as daemon:
        figures["grpc_echo"] = grpc_echo_us(daemon.address, calls)
        for transport in ("stream", "unary", "link"):
            remote = RemoteModule(daemon.address, name="site0", transport=transport)  # type: ignore[arg-type]
            try:
                figures[f"step_{transport}"] = partition_step_us([remote], calls)
            finally:
                remote.disconnect()
    return figures


def three_process(duration: float) -> dict[str, dict[str, float]]:
    """The three-process maRTHS loop with both hops on gRPC streams and on step links."""
    from hybridsim.coordinator.problems.marths import loop
    from hybridsim.coordinator.problems.marths.daemons import run_on_daemons

    spec = loop.RunSpec(duration=duration)
    ticks = spec.ticks()
    simulated = (ticks - 1) / 1024.0
    results = {}
    for transport in ("stream", "link"):
        timings: dict[str, float] = {}
        run_on_daemons(spec, transport=transport, timings=timings)
        total = sum(timings.values())
        results[transport] = {**timings, "tick_us": 1e6 * timings["loop_s"] / ticks,
                         "realtime_factor": simulated / total, "loop_realtime_factor": simulated / timings["loop_s"]}
    return results


def realtime(duration: float) -> dict[str, dict[str, float]]:
    """The real-time design card with the plant daemon over gRPC, over its link, and in the site's process."""
    return {"plant daemon, gRPC stream": realtime_late_steps(duration, grpc_only=True),
            "plant daemon, step link": realtime_late_steps(duration),
            "plant in the site's process": realtime_late_steps(duration, plant_daemon=False)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed round trips per floor (default: %(default)s)")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of record per maRTHS run (default: %(default)s)")
    parser.add_argument("--skip-realtime", action="store_true", help="leave out the real-time design-card runs")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    figures = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()},
               "floors_us": floors(args.calls), "three_process": three_process(args.duration)}
    if not args.skip_realtime:
        figures["realtime"] = realtime(args.duration)
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    f = figures["floors_us"]
    print(f"machine: {figures['machine']['platform']}, {figures['machine']['cpus']} CPUs, load average "
          + ", ".join(f"{x:.1f}" for x in figures["machine"]["load"]))
    print(f"loopback round trip p50: raw TCP echo {f['tcp_echo']:.0f} us, gRPC echo {f['grpc_echo']:.0f} us "
          f"(grpc.aio server {f['grpc_aio_server_echo']:.0f} us)")
    print(f"coordinator step, one 10-DOF daemon: Steps stream {f['step_stream']:.0f} us, unary Step "
          f"{f['step_unary']:.0f} us, step link {f['step_link']:.0f} us ({f['step_link'] / f['tcp_echo']:.2f}x the TCP echo)")
    for transport, r in figures["three_process"].items():
        print(f"three-process maRTHS, {'gRPC streams' if transport == 'stream' else 'step links'}: {r['tick_us']:.0f} us per "
              f"tick, {r['loop_realtime_factor']:.2f}x real time in the loop, {r['realtime_factor']:.2f}x with start-up "
              f"{r['start_s']:.2f} s and stop {r['stop_s']:.2f} s")
    for label, r in figures.get("realtime", {}).items():
        print(f"real-time design card ({label}, {r['steps']} steps): {r['late_steps_pct']:.2f} % late, step p50 "
              f"{r['step_p50_us']:.0f} us, p99 {r['step_p99_us']:.0f} us, max lateness {r['max_lateness_us']:.0f} us")


if __name__ == "__main__":
    main()
