"""`hybridsim bench`: the speed of hybridsim against its physical floors, measured side by side in one run.

Each figure is a median (p50) over many repetitions on this machine, taken in
one process so that ratios compare like with like:

- ``echo_us``: the bare round trip on loopback of a gRPC Echo to a site daemon (through the
  synchronous stack, and through grpc.aio), and of a raw TCP echo (the floor under any wire
  protocol), with the payload of a 10-DOF step;
- ``step_us``: the coordinator's step (propose + execute at every module in parallel, commit)
  with 1, 2, 4 and 8 linear site daemons over the gRPC Steps stream, and ``step_over_echo`` its
  ratio to the gRPC echo; ``step_us_link`` the same over the sites' step links (hybridsim.wire.link, what a
  run on this machine uses) and ``step_link_over_tcp_echo`` its ratio to the raw TCP echo;
- ``dof_scaling``: the in-process alpha-OS step over 10 to 2000 condensed DOFs and the
  exponent of a power-law fit (1 is linear, 2 is the dense mat-vec);
- ``hybrid_over_monolithic``: the maRTHS frame as OpenSees site daemons plus a linear module,
  against the whole frame under OpenSees' AlphaOS, same record (ratio of loop wall times);
- ``marths_realtime_factor``: simulated seconds per wall second of the benchmark loop, in process (its
  ticks in one compiled kernel; ``inprocess_objects``: on the site's objects, side by side) and with the
  experimental site and the plant as daemons (two round trips per 1024 Hz tick), on the daemons' step
  links (``details.marths_loop`` adds them on gRPC Steps streams, the timings and the first run);
- ``realtime_late_steps_pct``: the design-card run (coordinator, frame, site, plant: four processes)
  paced to the wall clock at Dt = 10/1024 s with the site's actuator loop at 1024 Hz (ten site-to-plant
  round trips per step on the plant daemon's step link); the details give the same over gRPC alone and
  with the plant inside the site's process, as a lab's real-time controller has it;
- ``long_run``: every integrator with every module kind, in process and as a daemon, over a record
  repeated ten times: steps/s over the first and last tenth, memory of the coordinator and the
  daemons at 10, 50 and 100 %, checkpoint sizes, and a real-time 1024 Hz run of two daemons
  (``hybridsim.coordinator.bench_longrun``; benchmarks/long_run.py runs it longer);
- ``wan``: for emulated round trips of 0, 5, 20 and 60 ms (jitter a tenth), the maRTHS test with its site on its
  own clock across the path: mean step over its target, % slowed steps, % held samples, and the benchmark's J2
  and J7 across it, beside OpenFresco's published 19.88 vs 19.53 ms and 0.8 % (``hybridsim.coordinator.bench_wan``;
  about 15 minutes, most of it the J runs: a 1024 Hz loop cannot step faster than the round trip).
- ``large_model``: the in-process step over a plane frame of 1k to 100k DOFs under alpha-OS and KR-alpha (sparse),
  the largest that holds 1024 Hz on one core and the dense/sparse crossover (``hybridsim.coordinator.bench_large``).
- ``step_floors``: each cross-process step (an OpenSees site daemon, openseespy's genericClient at a linear and an
  experimental site, the maRTHS loop with its site and plant as daemons) beside its floor (``hybridsim.coordinator.bench_floor``).
- ``writer_checksums``: the results writer's CPU per row of the maRTHS layout without and with its Fletcher32
  checksums, side by side (``hybridsim.coordinator.recorder.cost``).
"""

from __future__ import annotations

import dataclasses
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import grpc
import numpy as np

from hybridsim.wire.daemons import LocalDaemon
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.bench_large import large_model
from hybridsim.coordinator.bench_longrun import long_run_figures
from hybridsim.coordinator.bench_wan import wan_figures
from hybridsim.coordinator.partition import ModuleSlot, Partition
from hybridsim.wire.remote import RemoteModule
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.coordinator.recorder.cost import lateness_with_and_without, writer_checksums
from hybridsim.v1 import module_pb2 as pb
from hybridsim.v1 import module_pb2_grpc as pb_grpc
from hybridsim.wire.contract import Module, Session

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SITE_DOFS = 10
WARMUP = 200
DAEMON_COUNTS = (1, 2, 4, 8)

_TCP_ECHO_SERVER = """
import socket, sys
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
print(server.getsockname()[1], flush=True)
connection, _ = server.accept()
connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while True:
    data = connection.recv(65536)
    if not data:
        break
    connection.sendall(data)
"""

TCP_RELAY = """
import socket, sys
echo = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
echo.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
connection, _ = server.accept()
connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while data := connection.recv(65536):
    echo.sendall(data)
    back = b""
    while len(back) < len(data):
        back += echo.recv(65536)
    connection.sendall(back)
"""
"""relays each message to an echo server (its port the first argument) and its answer back: two hops, no work"""


def p50_us(calls: int, call: Callable[[int], object]) -> float:
    """Median wall time of ``call(i)`` in microseconds, after a warm-up."""
    for i in range(WARMUP):
        call(i)
    samples = []
    for i in range(WARMUP, WARMUP + calls):
        start = time.perf_counter()
        call(i)
        samples.append(time.perf_counter() - start)
    return 1e6 * statistics.median(samples)


def chain_config(site: int, ndof: int = SITE_DOFS) -> dict[str, Any]:
    """A spring chain (k = 1 MN/m) over DOFs of its own, as a linear module's config."""
    k = 1e6 * (2 * np.eye(ndof) - np.eye(ndof, k=1) - np.eye(ndof, k=-1))
    return {"dofs": [f"s{site}_x{i}" for i in range(ndof)], "stiffness": k.tolist()}


def grpc_echo_us(address: str, calls: int) -> float:
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.ModuleStub(channel)
        request = pb.EchoRequest(payload=bytes(8 * SITE_DOFS))
        return p50_us(calls, lambda _i: stub.Echo(request, timeout=5))


def grpc_aio_echo_us(address: str, calls: int) -> float:
    """The same Echo through grpc.aio (asyncio), each call awaited before the next (a lockstep step)."""
    import asyncio

    async def measure() -> float:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = pb_grpc.ModuleStub(channel)
            request = pb.EchoRequest(payload=bytes(8 * SITE_DOFS))
            samples = []
            for i in range(WARMUP + calls):
                start = time.perf_counter()
                await stub.Echo(request, timeout=5)
                if i >= WARMUP:
                    samples.append(time.perf_counter() - start)
            return 1e6 * statistics.median(samples)

    return asyncio.run(measure())


def tcp_echo_us(calls: int, relayed: bool = False) -> float:
    """Round trip of the same payload through a raw TCP echo in another process (``relayed``: through a
    :data:`TCP_RELAY` process in front of it, two hops)."""
    server = subprocess.Popen([sys.executable, "-c", _TCP_ECHO_SERVER], stdout=subprocess.PIPE, text=True)
    processes = [server]
    try:
        port = int(server.stdout.readline())  # type: ignore[union-attr]
        if relayed:
            processes.append(subprocess.Popen([sys.executable, "-c", TCP_RELAY, str(port)], stdout=subprocess.PIPE,
                                              text=True))
            port = int(processes[-1].stdout.readline())  # type: ignore[union-attr]
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            payload = bytes(8 * SITE_DOFS)

            def round_trip(_i: int) -> None:
                client.sendall(payload)
                received = 0
                while received < len(payload):
                    received += len(client.recv(65536))

            return p50_us(calls, round_trip)
    finally:
        for process in processes:
            process.kill()
            process.wait()


def partition_step_us(modules: Sequence[Module], calls: int) -> float:
    """The coordinator's step over ``modules`` (each on DOFs of its own, as many as it describes), as hybridsim.coordinator.partition runs it."""
    slots, first = [], 0
    for n, module in enumerate(modules):
        description = module.describe()
        module.open(Session(1e-3, description.dof_names, run_id="bench"))
        index = np.arange(first, first + len(description.dof_names))
        first += index.size
        slots.append(ModuleSlot(f"site{n}", module, description, index, "bench"))
    partition = Partition(first, slots)
    displacement = 1e-3 * np.random.default_rng(1).standard_normal(partition.ndof)

    def step(i: int) -> None:
        partition.restoring_force(i + 1, i * 1e-3, displacement)
        partition.commit(i + 1)

    try:
        return p50_us(calls, step)
    finally:
        partition.close()


def wire_figures(calls: int) -> dict[str, Any]:
    """Echo floors and the step time with 1, 2, 4, 8 daemons (all daemons started at once)."""
    tcp = tcp_echo_us(calls)
    daemons = [LocalDaemon("linear", chain_config(n), name=f"site{n}", start_timeout_s=180)
               for n in range(max(DAEMON_COUNTS))]
    try:
        for daemon in daemons:
            daemon.launch()
        addresses = [daemon.start() for daemon in daemons]
        echo = grpc_echo_us(addresses[0], calls)
        aio = grpc_aio_echo_us(addresses[0], calls)
        steps: dict[str, dict[str, float]] = {"stream": {}, "link": {}}
        for count in DAEMON_COUNTS:
            for transport, figures in steps.items():
                remotes = [RemoteModule(a, name=f"site{n}", transport=transport)  # type: ignore[arg-type]
                           for n, a in enumerate(addresses[:count])]
                try:
                    figures[str(count)] = partition_step_us(remotes, calls)
                finally:
                    for remote in remotes:
                        remote.disconnect()
    finally:
        for daemon in daemons:
            daemon.stop()
    return {"echo_us": {"grpc": echo, "tcp": tcp, "grpc_asyncio": aio}, "step_us": steps["stream"],
            "step_over_echo": {count: value / echo for count, value in steps["stream"].items()},
            "step_us_link": steps["link"], "step_link_over_tcp_echo": {c: v / tcp for c, v in steps["link"].items()}}


def dof_scaling(dofs: Sequence[int] = (10, 30, 100, 300, 1000, 2000), steps: int = 400) -> dict[str, Any]:
    """In-process alpha-OS step time over an n-DOF chain (one linear module) and its power-law exponent."""
    motion = EXAMPLES.parent / "coordinator" / "data" / "marths" / "ground_motion_elcentro.csv"
    times = []
    for n in dofs:
        names = [f"x{i}" for i in range(n)]
        config = chain_config(0, n)
        config["dofs"] = names
        table = {"experiment": {"name": f"chain{n}", "dt": 0.005, "duration": steps * 0.005},
                 "structure": {"dofs": names, "mass_diagonal": [100.0] * n, "influence": [1.0] * n},
                 "ground_motion": {"file": str(motion)}, "modules": [{"name": "chain", "kind": "linear",
                                                                      "config": config}]}
        with tempfile.TemporaryDirectory(prefix="hybridsim-bench-") as folder:
            experiment = parse_experiment(table, base_dir=Path(folder))
            summary = run_experiment(experiment, output=Path(folder) / "chain.h5").summary
        times.append(summary["step_time_us"]["p50"])
    return {"dofs": list(dofs), "step_us": times, "exponent": power_law_exponent(dofs, times)}


def power_law_exponent(x: Sequence[float], y: Sequence[float]) -> float:
    """The exponent p of the least-squares fit y = c x^p in log-log coordinates."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def hybrid_over_monolithic(duration: float = 5.0) -> dict[str, float]:
    """Wall time of the hybrid OpenSees frame's integration loop (site daemons, started beforehand) over that
    of the monolithic AlphaOS run (model build included: OpenSees has no separate start-up to leave out).

    The ratio is the run's default (steps on the sites' step links); ``hybrid_grpc_s`` is the same loop with
    every step on the gRPC Steps streams."""
    from hybridsim.modules.opensees.models import marths_frame
    from hybridsim.modules.opensees.monolithic import alpha_os_response

    table = tomllib.loads((EXAMPLES / "opensees_frame_hybrid.toml").read_text())
    table["experiment"]["duration"] = duration
    experiment = parse_experiment(table, base_dir=EXAMPLES)
    loops = {}
    for key, transport in (("hybrid_s", "auto"), ("hybrid_grpc_s", "stream")):
        modules = tuple(m if m.address is None else dataclasses.replace(m, transport=transport)
                        for m in experiment.modules)
        with tempfile.TemporaryDirectory(prefix="hybridsim-bench-") as folder:
            loops[key] = run_experiment(dataclasses.replace(experiment, modules=modules),
                                        output=Path(folder) / "hybrid.h5").summary["loop_wall_s"]
    start = time.perf_counter()
    if experiment.damping.rayleigh is None:
        raise ValueError("hybrid_over_monolithic needs the example's damping as rayleigh = [a, b]")
    alpha_os_response(Path(marths_frame.__file__), {}, dt=experiment.dt, ground_acceleration=experiment.motion.acceleration,
                      alpha=experiment.integrator_options.get("alpha", -0.05),
                      record=marths_frame.control_nodes(experiment.dofs), rayleigh=experiment.damping.rayleigh)
    monolithic = time.perf_counter() - start
    return {**loops, "monolithic_s": monolithic, "ratio": loops["hybrid_s"] / monolithic}


def marths_realtime_factor(duration: float = 20.0) -> dict[str, Any]:
    """Simulated seconds per wall second of the benchmark loop in process and with the site and plant as daemons.

    In process: the loop once the process has its one-time work done (record, reference run, loaded
    kernels), which a first 1 s run does and ``first_run_s`` reports; every tick in one compiled kernel
    ("inprocess") and, side by side, on the site's Python objects tick by tick ("inprocess_objects").  As
    daemons: start-up and stop included, as a user would see it, every sample on the daemons' step links
    ("daemons") and on their gRPC Steps streams ("daemons_grpc").
    """
    from hybridsim.coordinator.problems.marths import loop
    from hybridsim.coordinator.problems.marths.daemons import run_on_daemons

    spec = loop.RunSpec(duration=duration)
    simulated = (spec.ticks() - 1) / 1024.0
    start = time.perf_counter()
    loop.run(loop.RunSpec(duration=1.0))
    loop.prepare(spec)
    first_run_s = time.perf_counter() - start
    factors: dict[str, Any] = {}
    for key, compiled in (("inprocess_objects", False), ("inprocess", True)):
        start = time.perf_counter()
        loop.run(spec, compiled=compiled)
        factors[key] = simulated / (time.perf_counter() - start)
    for key, transport in (("daemons", "link"), ("daemons_grpc", "stream")):
        timings: dict[str, float] = {}
        start = time.perf_counter()
        run_on_daemons(spec, transport=transport, timings=timings)
        factors[key] = simulated / (time.perf_counter() - start)
        factors[f"{key}_timings_s"] = timings
    factors["first_run_s"] = first_run_s
    return factors


def realtime_late_steps(duration: float = 20.0, samples_per_step: int = 10, plant_daemon: bool = True,
                        grpc_only: bool = False) -> dict[str, float]:
    """The design-card maRTHS run in real-time mode at Dt = 10/1024 s with the site loop at 1024 Hz.

    Steps travel as the run's defaults choose (the daemons' step links on this machine); ``grpc_only``
    sends every step, coordinator to site and site to plant, over the gRPC Steps streams instead.
    """
    from hybridsim.coordinator.problems.marths.hybrid import design_card

    with tempfile.TemporaryDirectory(prefix="hybridsim-bench-") as folder:
        experiment = design_card(Path(folder), duration, dt=samples_per_step / 1024.0, plant_daemon=plant_daemon)
        if grpc_only:
            experiment = dataclasses.replace(experiment, modules=tuple(
                dataclasses.replace(m, transport="stream") for m in experiment.modules))
            if plant_daemon:
                site = next(m for m in experiment.modules if m.kind == "experimental")
                site.config["backend"]["transport"] = "stream"
        summary = run_experiment(experiment, realtime=True).summary
    return {"late_steps_pct": summary["late_steps_pct"], "steps": summary["steps"],
            "step_p50_us": summary["step_time_us"]["p50"], "step_p99_us": summary["step_time_us"]["p99"],
            "max_lateness_us": summary["max_lateness_us"]}


def site_clock_figures(duration: float = 20.0) -> dict[str, Any]:
    """The design-card maRTHS run at Dt = 1/1024 s (coordinator, frame daemon, plant daemon) with the site daemon
    on its own clock at 1024 Hz (SCHED_FIFO 80, 50 us busy-wait; the coordinator's loop at 70), against the
    same run in lockstep: the site's control-sample lateness (us; late: a tick more than 10 % of dt after it
    was due), its held samples, the run's maRTHS J2 and J7 (%, over ``duration`` s)."""
    from hybridsim.coordinator.problems.marths.daemons import CLOCK, LOOP_PRIORITY
    from hybridsim.coordinator.problems.marths.hybrid import design_card
    from hybridsim.modules.experimental.clock import realtime_thread

    figures: dict[str, Any] = {}
    for label, site in (("lockstep", None), ("own", CLOCK)):
        with tempfile.TemporaryDirectory(prefix="hybridsim-bench-") as folder:
            experiment = design_card(Path(folder), duration, site=site)
            with realtime_thread(LOOP_PRIORITY if site else 0):
                summary = run_experiment(experiment).summary
        figures[f"J2_{label}"] = summary["evaluation"]["J"]["J2"]
        figures[f"J7_{label}"] = summary["evaluation"]["J"]["J7"]
    stats = summary["modules"]["lab"]
    samples = stats["clock_samples"]
    return {"lateness_p50_us": stats["clock_lateness_p50_us"], "lateness_p99_us": stats["clock_lateness_p99_us"],
            "lateness_max_us": stats["clock_lateness_max_us"],
            "late_samples_pct": 100.0 * stats["clock_late_samples"] / samples, "samples": samples,
            "held_samples_pct": 100.0 * stats["clock_held_samples"] / samples, "rate_hz": 1024.0,
            "priority": stats["clock_priority"], **figures}


class Sections:
    """Runs the bench's measurements one by one; one that raises is named in ``failed`` (with its error's first
    line) and gives None, so the others' figures are still printed."""

    def __init__(self) -> None:
        self.failed: dict[str, str] = {}

    def __call__(self, name: str, measure: Callable[[], Any]) -> Any:
        try:
            return measure()
        except Exception as exc:  # noqa: BLE001 -- a failed measurement is reported, the bench goes on
            self.failed[name] = (f"{type(exc).__name__}: {exc}".splitlines() or [""])[0]
            return None


def run_all(calls: int = 2000, quick: bool = False) -> dict[str, Any]:
    """Every figure of `hybridsim bench`, in the JSON shape of the issue (plus the details behind each).

    A section that fails does not take the others with it: its figures are missing and ``failed`` names it
    with its error (one line each)."""
    duration = 8.0 if quick else 20.0
    section = Sections()
    failed = section.failed
    figures: dict[str, Any] = {}
    details: dict[str, Any] = {}
    wire = section("wire", lambda: wire_figures(200 if quick else calls))
    figures.update(wire or {})
    scaling = section("dof_scaling", lambda: dof_scaling((10, 100, 300) if quick else (10, 30, 100, 300, 1000, 2000),
                                                         100 if quick else 400))
    marths_loop = section("marths_realtime_factor", lambda: marths_realtime_factor(duration))
    hybrid = section("hybrid_over_monolithic", lambda: hybrid_over_monolithic(1.0 if quick else 5.0))
    late = section("realtime", lambda: realtime_late_steps(duration))
    late_grpc = section("realtime_grpc", lambda: realtime_late_steps(duration, grpc_only=True))
    late_at_site = section("realtime_plant_at_site", lambda: realtime_late_steps(duration, plant_daemon=False))
    long = section("long_run", lambda: long_run_figures(2.0 if quick else 8.0, 5.0 if quick else 20.0))
    clock = section("site_clock", lambda: site_clock_figures(duration))
    wan = section("wan", lambda: wan_figures(3.0 if quick else 10.0, 1.0 if quick else 8.0))
    writer = section("writer_checksums", lambda: {**writer_checksums(16384 if quick else 65536), "realtime":
                                                   lateness_with_and_without(lambda: realtime_late_steps(duration))})
    large = section("large_model", lambda: large_model(((18, 19),), ((4, 8), (18, 19)), 256, 2.0) if quick
                    else large_model())
    from hybridsim.coordinator.bench_floor import floor_figures  # (it measures with this module's step and echo)

    floors = section("step_floors", lambda: floor_figures(200 if quick else calls, 200 if quick else 2000,
                                                          2.0 if quick else 10.0))
    for key, value in (("long_run", long), ("site_clock", clock), ("wan", wan), ("dof_scaling", scaling),
                       ("writer_checksums", writer), ("large_model", large), ("step_floors", floors)):
        if value is not None:
            figures[key] = value
    if marths_loop is not None:
        figures["marths_realtime_factor"] = {key: marths_loop[key] for key in ("inprocess", "inprocess_objects",
                                                                                  "daemons")}
        details["marths_loop"] = marths_loop
    if hybrid is not None:
        figures["hybrid_over_monolithic"] = hybrid["ratio"]
        details["hybrid_over_monolithic"] = hybrid
    if late is not None:
        figures["realtime_late_steps_pct"] = late["late_steps_pct"]
    for key, value in (("realtime", late), ("realtime_grpc", late_grpc), ("realtime_plant_at_site", late_at_site)):
        if value is not None:
            details[key] = value
    figures["details"] = details
    if failed:
        figures["failed"] = failed
    return figures
