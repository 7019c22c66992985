"""Wall time per simulated second of one maRTHS run: in process (objects, compiled) and with the sites as daemons.

    python benchmarks/marths_loop_speed.py [--record elcentro] [--duration S] [--json] [--profile] [--no-daemons]

One nominal run (RLS-AC, noise on) of the benchmark loop, tick by tick at
1024 Hz, side by side in one process: the experimental site and the plant in
this process, once on their Python objects tick by tick and once with every
tick in one compiled kernel (hybridsim.coordinator.problems.marths.tick); then
with each of them a `hybridsim site` daemon on 127.0.0.1 (the loop drives the
site, the site drives the plant, one round trip each per tick).  The reference
run and the Newmark map, which every run of a record and scale shares, are
computed first (``prepare_s``); daemon start-up is reported apart.  Prints the
load average too: the figures are only as quiet as the machine.  ``--profile``:
where each in-process loop's time goes, the profiler's own time per tick of each
source file (the profiler adds about a microsecond per Python call, so read the
shares, not the sum; the compiled loop's ticks are one call, ``marths/tick.py``).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.marths import daemons as daemons_module, loop
from hybridsim.coordinator.problems.marths.structure import newmark_step
from hybridsim.modules.kernels import kernel


def _in_process(spec: loop.RunSpec, compiled: bool) -> dict[str, float]:
    simulated = (spec.ticks() - 1) / 1024
    start = time.perf_counter()
    loop.run(spec, compiled=compiled)
    wall = time.perf_counter() - start
    return {"wall_s": wall, "simulated_s": simulated, "wall_per_simulated_s": wall / simulated,
            "us_per_tick": 1e6 * wall / spec.ticks(), "real_time_factor": simulated / wall}


def _warm(spec: loop.RunSpec) -> float:
    """The shared work of ``spec``'s record and scale (reference run, map) and the loaded kernels (s)."""
    start = time.perf_counter()
    loop.prepare(spec)
    for compiled in (False, True):
        loop.run(loop.RunSpec(record=spec.record, compensator="rls", duration=1.0), compiled=compiled)
    return time.perf_counter() - start


def measure(record: str, duration: float | None, daemons: bool = True) -> dict[str, dict[str, float]]:
    spec = loop.RunSpec(record=record, compensator="rls", plant="nominal", duration=duration)
    simulated = (spec.ticks() - 1) * 1 / 1024
    out = {"prepare": {"wall_s": _warm(spec)}}
    out["in process, objects"] = _in_process(spec, compiled=False)
    out["in process, compiled"] = _in_process(spec, compiled=True)
    if not daemons:
        return out
    timings: dict[str, float] = {}
    original = loop.simulate

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            timings["loop"] = time.perf_counter() - t0

    loop.simulate = timed  # the loop alone, without daemon start-up and teardown
    start = time.perf_counter()
    try:
        daemons_module.run_on_daemons(spec)
    finally:
        loop.simulate = original
    total = time.perf_counter() - start
    out["daemons"] = {"wall_s": timings["loop"], "simulated_s": simulated,
                      "wall_per_simulated_s": timings["loop"] / simulated,
                      "us_per_tick": 1e6 * timings["loop"] / spec.ticks(), "real_time_factor": simulated / timings["loop"],
                      "startup_and_teardown_s": total - timings["loop"]}
    return out


def where_the_time_goes(record: str, duration: float | None, compiled: bool) -> dict[str, float]:
    """Microseconds per tick of the in-process loop (``compiled``: its ticks in one kernel) spent in each source
    file's own code (profiled), largest first; numpy's and Python's built-ins under their names."""
    spec = loop.RunSpec(record=record, compensator="rls", plant="nominal", duration=duration)
    _warm(spec)
    profile = cProfile.Profile()
    profile.runcall(loop.run, spec, compiled=compiled)
    per_file: Counter[str] = Counter()
    for (filename, _, function), (_, _, own, _, _) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        path = Path(filename)
        key = "/".join(path.parts[path.parts.index("hybridsim") + 1:] if "hybridsim" in path.parts
                       else path.parts[-2:]) if filename != "~" else function
        per_file[key] += own
    return {name: 1e6 * own / spec.ticks() for name, own in per_file.most_common(12)}


@kernel
def _newmark_alone(transition: np.ndarray, ground: np.ndarray, feedback: np.ndarray, ag: np.ndarray) -> float:
    """The compiled loop's Newmark steps with no site (zero feedback force): what they cost alone."""
    state, force = np.zeros(transition.shape[0]), np.zeros(feedback.shape[1])
    for k in range(ag.size):
        state = newmark_step(transition, ground, feedback, state, ag[k], force)
    return float(state[0])


def newmark_share(record: str, duration: float | None) -> dict[str, float]:
    """Microseconds per tick of the compiled loop and of its Newmark steps alone (best of three each)."""
    spec = loop.RunSpec(record=record, compensator="rls", plant="nominal", duration=duration)
    _warm(spec)
    newmark = loop.numerical_map(spec.partition)
    ag = np.array(loop.ground_acceleration(spec.record, spec.scale, spec.ticks()))
    _newmark_alone(newmark.transition, newmark.ground, newmark.feedback, ag[:10])
    alone, whole = [], []
    for _ in range(3):
        start = time.perf_counter()
        _newmark_alone(newmark.transition, newmark.ground, newmark.feedback, ag)
        alone.append(time.perf_counter() - start)
        whole.append(_in_process(spec, compiled=True)["wall_s"])
    return {"compiled tick": 1e6 * min(whole) / ag.size, "its Newmark step (87 states) alone": 1e6 * min(alone) / ag.size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", default="elcentro")
    parser.add_argument("--duration", type=float, help="first S seconds only (default: the whole record)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", action="store_true", help="where the in-process loops' time goes, per file")
    parser.add_argument("--no-daemons", action="store_true", help="in process only")
    args = parser.parse_args()
    if args.profile:
        shares = {kind: where_the_time_goes(args.record, args.duration, compiled)
                  for kind, compiled in (("objects", False), ("compiled", True))}
        shares["compiled, inside the kernel"] = newmark_share(args.record, args.duration)
        print(json.dumps(shares) if args.json else "\n".join(
            f"{kind}:\n" + "\n".join(f"{us:8.2f} us/tick  {name}" for name, us in per_file.items())
            for kind, per_file in shares.items()))
        return
    result = measure(args.record, args.duration, not args.no_daemons)
    meta = {"python": platform.python_version(), "cpus": os.cpu_count(), "load_average": os.getloadavg()}
    if args.json:
        print(json.dumps({"results": result, "machine": meta}))
        return
    print(f"maRTHS {args.record}, RLS-AC, nominal plant; {meta['cpus']} CPUs, load average "
          f"{', '.join(f'{v:.1f}' for v in meta['load_average'])}")
    print(f"reference run, map and kernels first: {result.pop('prepare')['wall_s']:.2f} s")
    print(f"{'topology':21} {'simulated s':>11} {'wall s':>8} {'us / tick':>10} {'x real time':>12}")
    for name, r in result.items():
        print(f"{name:21} {r['simulated_s']:11.2f} {r['wall_s']:8.3f} {r['us_per_tick']:10.2f} "
              f"{r['real_time_factor']:12.1f}")
    if "daemons" in result:
        print(f"daemon start-up and teardown: {result['daemons']['startup_and_teardown_s']:.1f} s")


if __name__ == "__main__":
    main()
