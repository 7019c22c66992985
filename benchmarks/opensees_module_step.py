"""Time per step of the OpenSees module, in process and as a site daemon.

    python benchmarks/opensees_module_step.py [--steps 2000] [--json]

For each model below, one step is propose + execute + commit of a small
sinusoidal displacement history at every control DOF (the work of one
alpha-OS step at that site).  "in process" calls the module directly;
"daemon" goes through `hybridsim site opensees` on 127.0.0.1 and
RemoteModule's Steps stream, exactly as a run with ``address = "local"``.
Also measured: the first discard of a trial after N committed steps, which for a
path-dependent model starts a new worker process and replays the N steps (once: from
then on its commits keep a copy; benchmarks/opensees_long_run.py discard measures those).

models
  spring   one Steel01 zeroLength spring, 1 DOF (path-dependent)
  upper    maRTHS stories 2-3, 19 control DOFs, the 8 rotations of floors 2-3 condensed (elastic)
  portal   maRTHS portal with a Steel01 fiber column, 5 control DOFs (path-dependent)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.remote import RemoteModule
from hybridsim.wire.contract import Command, Module, Session
from hybridsim.modules.opensees import OpenSeesModule

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
WARMUP = 100
AMPLITUDE = {"translation": 2e-3, "rotation": 2e-3}  # m, rad: elastic for the frame, yielding for the spring


def configs() -> dict[str, tuple[dict[str, Any], Path]]:
    """(config table, base_dir) of each benchmarked model."""
    spring = {"model": "springs.py", "control": [{"name": "u", "node": 2, "dof": 1}],
              "parameters": {"case": "steel01", "fy": 1.0, "e0": 1000.0}}
    out = {"spring": (spring, ROOT / "tests" / "modules" / "opensees" / "models")}
    for name, file in (("upper", "opensees_site_upper.toml"), ("portal", "opensees_site_bay_steel01.toml")):
        out[name] = (tomllib.loads((EXAMPLES / file).read_text()), EXAMPLES)
    return out


def history(module: Module, steps: int) -> np.ndarray:
    """(steps x ndof) targets: one sine per DOF, 50 steps per cycle, phase-shifted."""
    kinds = [d.kind for d in module.describe().dofs]
    amplitude = np.array([AMPLITUDE[k] for k in kinds])
    n = np.arange(steps)[:, None]
    return amplitude * np.sin(2 * np.pi * n / 50 + np.arange(len(kinds))[None, :])


def step_times(module: Module, steps: int, first: int = 0) -> np.ndarray:
    """Wall time (s) of each propose + execute + commit after a warm-up."""
    module.open(Session(dt=0.01, dof_names=module.describe().dof_names))
    targets = history(module, WARMUP + steps)
    times = np.zeros(steps)
    for i, target in enumerate(targets):
        start = time.perf_counter()
        module.propose(first + i, Command(0.01 * i, target))
        module.execute(first + i)
        module.commit(first + i)
        if i >= WARMUP:
            times[i - WARMUP] = time.perf_counter() - start
    return times


def discard_time(make: Callable[[], OpenSeesModule], committed: int) -> float:
    """Wall time (s) of the first trial discarded after ``committed`` committed steps (path-dependent: a new
    worker process and a replay)."""
    module = make()
    try:
        step_times(module, committed - WARMUP)
        target = history(module, committed + 1)[-1]
        module.propose(committed, Command(0.0, target))
        module.execute(committed)
        start = time.perf_counter()
        module.propose(committed + 1, Command(0.0, 0.5 * target))  # discards the executed trial first
        return time.perf_counter() - start
    finally:
        module.close()


def summary(times: np.ndarray) -> dict[str, float]:
    return {"p50_us": 1e6 * float(np.median(times)), "p90_us": 1e6 * float(np.percentile(times, 90)),
            "mean_us": 1e6 * float(np.mean(times))}


def measure(steps: int) -> dict[str, Any]:
    results: dict[str, Any] = {"steps": steps, "python": platform.python_version(), "cpus": os.cpu_count(),
                               "load_average_1min": os.getloadavg()[0]}
    for name, (config, base_dir) in configs().items():
        def make() -> OpenSeesModule:
            return OpenSeesModule.from_config(config, base_dir=base_dir)

        module = make()
        ndof = len(module.describe().dofs)
        try:
            local = summary(step_times(module, steps))
        finally:
            module.close()
        with LocalDaemon("opensees", config, base_dir=base_dir, name=name, start_timeout_s=120) as daemon:
            remote = RemoteModule(daemon.address, name=name)
            try:
                wire = summary(step_times(remote, steps))
            finally:
                remote.close()
                remote.disconnect()
        results[name] = {"dofs": ndof, "in_process": local, "daemon": wire,
                         "discard_after_1000_steps_ms": 1e3 * discard_time(make, 1000)}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000, help="timed steps per case (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    results = measure(args.steps)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"OpenSees module, time per step (propose + execute + commit), {args.steps} steps, "
          f"Python {results['python']}, {results['cpus']} CPUs, load average {results['load_average_1min']:.1f}")
    print(f"{'model':8s} {'DOFs':>4s} {'in process p50':>15s} {'p90':>8s} {'daemon p50':>11s} {'p90':>8s} "
          f"{'discard after 1000':>19s}")
    for name in configs():
        r = results[name]
        print(f"{name:8s} {r['dofs']:4d} {r['in_process']['p50_us']:12.0f} us {r['in_process']['p90_us']:5.0f} us "
              f"{r['daemon']['p50_us']:8.0f} us {r['daemon']['p90_us']:5.0f} us "
              f"{r['discard_after_1000_steps_ms']:16.1f} ms")


if __name__ == "__main__":
    main()
