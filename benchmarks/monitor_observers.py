"""The step time of a monitored run with no observer, active observers and a stalled observer, in one run.

    python benchmarks/monitor_observers.py [--duration 24] [--json]

Runs examples/monitor_shear_building.toml (in process, not paced, cut to
``--duration`` seconds of record) on a monitor at a free loopback port and
splits it into four equal phases of steps: no observer; one observer reading
every frame; four observers reading every frame; one observer that never
reads (frames every 10 ms, queues of 8 frames: its frames are soon dropped).  Prints the median and p99 step wall time of
each phase and the ratio of its median to the first phase's.
"""

from __future__ import annotations

import argparse
import io
import json
import threading
import time
import tomllib
from pathlib import Path

import grpc
import numpy as np

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.monitor.session import monitoring
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.v1 import monitor_pb2 as pb
from hybridsim.v1 import monitor_pb2_grpc as pb_grpc

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "monitor_shear_building.toml"
PHASES = ("no observer", "1 observer", "4 observers", "1 stalled observer")


def _reader(address: str, stop: threading.Event) -> None:
    for _ in pb_grpc.MonitorStub(grpc.insecure_channel(address)).Watch(pb.WatchRequest()):
        if stop.is_set():
            return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=24.0, help="seconds of the record to run (default 24)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    table = tomllib.loads(EXAMPLE.read_text())
    table["experiment"]["duration"] = args.duration
    experiment = parse_experiment(table, base_dir=EXAMPLE.parent)
    output = Path("results/monitor_observers.h5")
    bounds = np.linspace(0, experiment.steps, len(PHASES) + 1).astype(int)
    printed, stop, boundaries = io.StringIO(), threading.Event(), []
    # frames every 10 ms and a queue of 8: the stalled observer's queue overflows within its phase
    with monitoring(experiment, "127.0.0.1:0", "benchmark", stream=printed, period_s=0.01, queue_frames=8) as hooks:
        address = printed.getvalue().split(" on ")[1].split(";")[0]
        publisher = hooks["listeners"][0]

        def observers() -> None:
            for phase, count in enumerate((0, 1, 3)):  # readers added at the start of phases 1..3 (1, then 4)
                while publisher.latest_step < bounds[phase]:
                    time.sleep(0.001)
                for _ in range(count):
                    threading.Thread(target=_reader, args=(address, stop), daemon=True).start()
                boundaries.append(publisher.latest_step)
            while publisher.latest_step < bounds[3]:
                time.sleep(0.001)
            stop.set()  # the readers leave; a stalled observer joins
            hooks["stalled"] = pb_grpc.MonitorStub(grpc.insecure_channel(
                address, options=[("grpc.http2.bdp_probe", 0)])).Watch(pb.WatchRequest())
            boundaries.append(publisher.latest_step)

        watcher = threading.Thread(target=observers, daemon=True)
        watcher.start()
        run_experiment(experiment, output=output, **{k: v for k, v in hooks.items() if k != "stalled"})
        dropped = [s.dropped for s in publisher.observers()]
    wall = read_results(output)["wall_step_s"]
    edges = boundaries[1:] + [experiment.steps]
    starts = [100] + [b + 200 for b in boundaries[1:]]  # settle after each change
    figures = {}
    for name, start, end in zip(PHASES, starts, edges):
        phase = wall[start:end]
        figures[name] = {"steps": int(phase.size), "median_us": 1e6 * float(np.median(phase)),
                         "p99_us": 1e6 * float(np.percentile(phase, 99))}
    base = figures[PHASES[0]]["median_us"]
    for f in figures.values():
        f["ratio"] = f["median_us"] / base
    figures["stalled_observer_dropped_frames"] = dropped
    if args.json:
        print(json.dumps(figures))
        return
    print(f"monitored run: {experiment.steps} steps of {experiment.name}, in process, not paced")
    for name in PHASES:
        f = figures[name]
        print(f"{name:<20} {f['steps']:>6} steps  median {f['median_us']:7.1f} us  p99 {f['p99_us']:8.1f} us  "
              f"ratio {f['ratio']:.3f}")
    print(f"frames dropped for the stalled observer: {dropped}")


if __name__ == "__main__":
    main()
