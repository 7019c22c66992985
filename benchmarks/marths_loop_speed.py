"""Wall time per simulated second of one maRTHS run: in process and with the sites as gRPC daemons.

    python benchmarks/marths_loop_speed.py [--record elcentro] [--duration S] [--json] [--profile]

One nominal run (RLS-AC, noise on) of the benchmark loop, tick by tick at
1024 Hz: once with the experimental site and the plant in this process, once
with each of them a `hybridsim site` daemon on 127.0.0.1 (the loop drives the
site, the site drives the plant, one gRPC round trip each per tick).  Daemon
start-up is reported apart.  Prints the load average too: the figures are
only as quiet as the machine.  ``--profile``: where the in-process loop's time
goes, the profiler's own time per tick of each source file (the profiler adds
about a microsecond per call, so read the shares, not the sum).
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

from hybridsim.coordinator.problems.marths import daemons, loop


def measure(record: str, duration: float | None) -> dict[str, dict[str, float]]:
    spec = loop.RunSpec(record=record, compensator="rls", plant="nominal", duration=duration)
    simulated = (spec.ticks() - 1) * 1 / 1024
    loop.run(loop.RunSpec(record=record, compensator="rls", duration=6.0))  # warm the caches
    out = {}
    start = time.perf_counter()
    loop.run(spec)
    wall = time.perf_counter() - start
    out["in process"] = {"wall_s": wall, "simulated_s": simulated, "wall_per_simulated_s": wall / simulated,
                         "us_per_tick": 1e6 * wall / spec.ticks()}
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
        daemons.run_on_daemons(spec)
    finally:
        loop.simulate = original
    total = time.perf_counter() - start
    out["daemons"] = {"wall_s": timings["loop"], "simulated_s": simulated,
                      "wall_per_simulated_s": timings["loop"] / simulated,
                      "us_per_tick": 1e6 * timings["loop"] / spec.ticks(), "startup_and_teardown_s": total - timings["loop"]}
    return out


def where_the_time_goes(record: str, duration: float | None) -> dict[str, float]:
    """Microseconds per tick of the in-process loop spent in each source file's own code (profiled), largest
    first; numpy's and Python's built-ins under their names."""
    spec = loop.RunSpec(record=record, compensator="rls", plant="nominal", duration=duration)
    loop.run(loop.RunSpec(record=record, compensator="rls", duration=6.0))  # warm the caches
    profile = cProfile.Profile()
    profile.runcall(loop.run, spec)
    per_file: Counter[str] = Counter()
    for (filename, _, function), (_, _, own, _, _) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        path = Path(filename)
        key = "/".join(path.parts[path.parts.index("hybridsim") + 1:] if "hybridsim" in path.parts
                       else path.parts[-2:]) if filename != "~" else function
        per_file[key] += own
    return {name: 1e6 * own / spec.ticks() for name, own in per_file.most_common(20)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", default="elcentro")
    parser.add_argument("--duration", type=float, help="first S seconds only (default: the whole record)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", action="store_true", help="where the in-process loop's time goes, per file")
    args = parser.parse_args()
    if args.profile:
        shares = where_the_time_goes(args.record, args.duration)
        print(json.dumps(shares) if args.json else "\n".join(f"{us:8.2f} us/tick  {name}" for name, us in shares.items()))
        return
    result = measure(args.record, args.duration)
    meta = {"python": platform.python_version(), "cpus": os.cpu_count(), "load_average": os.getloadavg()}
    if args.json:
        print(json.dumps({"results": result, "machine": meta}))
        return
    print(f"maRTHS {args.record}, RLS-AC, nominal plant; {meta['cpus']} CPUs, load average "
          f"{', '.join(f'{v:.1f}' for v in meta['load_average'])}")
    print(f"{'topology':12} {'simulated s':>11} {'wall s':>8} {'wall / simulated s':>19} {'us / tick':>10}")
    for name, r in result.items():
        print(f"{name:12} {r['simulated_s']:11.2f} {r['wall_s']:8.2f} {r['wall_per_simulated_s']:19.3f} "
              f"{r['us_per_tick']:10.1f}")
    print(f"daemon start-up and teardown: {result['daemons']['startup_and_teardown_s']:.1f} s")


if __name__ == "__main__":
    main()
