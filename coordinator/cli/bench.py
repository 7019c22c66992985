"""`hybridsim bench`: measure hybridsim against its physical floors on this machine (see hybridsim.coordinator.bench)."""

from __future__ import annotations

import argparse
import json
import os
import platform
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser("bench", help="measure speed against the physical floors (one run, this machine)",
                            description=__doc__)
    parser.add_argument("--calls", type=int, default=2000,
                        help="timed round trips per wire figure (default: %(default)s; --quick: 200)")
    parser.add_argument("--quick", action="store_true", help="small sizes and short records (a smoke run)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from hybridsim.coordinator.bench import run_all
    from hybridsim.coordinator.errors import UsageError

    if args.calls < 1:
        raise UsageError(f"--calls: give 1 or more timed round trips, not {args.calls}")
    figures = run_all(args.calls, args.quick)
    figures["machine"] = {"platform": platform.platform(), "python": platform.python_version(),
                          "cpus": os.cpu_count(), "load_average": os.getloadavg()}
    print(as_json(figures) if args.json else format_table(figures))
    return 1 if "failed" in figures else 0


def as_json(figures: dict[str, Any]) -> str:
    """The figures as one strict JSON object: a figure that is not finite (a J over a record still at rest, as
    ``--quick``'s 1 s of maRTHS behind the emulated networks) becomes null, never ``Infinity`` or ``NaN``,
    which JSON parsers refuse."""
    from hybridsim.coordinator.problems.base import finite

    return json.dumps(finite(figures), allow_nan=False)


def format_table(f: dict[str, Any]) -> str:
    lines = [f"machine: {f['machine']['platform']}, {f['machine']['cpus']} CPUs, load average "
             + ", ".join(f"{v:.1f}" for v in f["machine"]["load_average"])]
    details = f["details"]
    if "echo_us" in f:
        echo = f["echo_us"]
        lines += [f"loopback round trip p50: gRPC echo {echo['grpc']:.0f} us (grpc.aio {echo['grpc_asyncio']:.0f} us), "
                  f"raw TCP echo {echo['tcp']:.0f} us (gRPC / TCP {echo['grpc'] / echo['tcp']:.1f})",
                  f"{'daemons':>8}{'step p50 us':>13}{'/ gRPC echo':>13}{'link p50 us':>13}{'/ TCP echo':>12}"]
        for count, us in f["step_us"].items():
            lines.append(f"{count:>8}{us:>13.0f}{f['step_over_echo'][count]:>13.2f}"
                         f"{f['step_us_link'][count]:>13.0f}{f['step_link_over_tcp_echo'][count]:>12.2f}")
    if "marths_loop" in details:
        rt = details["marths_loop"]
        lines.append(f"maRTHS benchmark loop: {rt['inprocess']:.1f}x real time in process (first 1 s run with its "
                     f"one-time work: {rt['first_run_s']:.2f} s); with the site and the plant as daemons, start-up "
                     f"included: {rt['daemons']:.2f}x on the step links, {rt['daemons_grpc']:.2f}x on gRPC streams")
    if "dof_scaling" in f:
        scaling = f["dof_scaling"]
        lines.append("in-process alpha-OS step: " + ", ".join(
            f"{n} DOFs {us:.0f} us" for n, us in zip(scaling["dofs"], scaling["step_us"]))
            + f"; fitted exponent {scaling['exponent']:.2f}")
    if "hybrid_over_monolithic" in details:
        hybrid = details["hybrid_over_monolithic"]
        lines.append(f"hybrid OpenSees frame (2 site daemons + linear portal) {hybrid['hybrid_s']:.2f} s "
                     f"({hybrid['hybrid_grpc_s']:.2f} s on gRPC) vs monolithic OpenSees AlphaOS "
                     f"{hybrid['monolithic_s']:.2f} s: ratio {f['hybrid_over_monolithic']:.1f}")
    for label, key in (("plant daemon", "realtime"), ("plant daemon, every step on gRPC", "realtime_grpc"),
                       ("plant in the site's process", "realtime_plant_at_site")):
        if key in details:
            late = details[key]
            lines.append(f"real-time maRTHS (Dt = 10/1024 s, site at 1024 Hz, {label}, {late['steps']} steps): "
                         f"{late['late_steps_pct']:.2f} % late, step p50 {late['step_p50_us']:.0f} us, "
                         f"p99 {late['step_p99_us']:.0f} us")
    if "site_clock" in f:
        c = f["site_clock"]
        lines.append(f"maRTHS site on its own clock at 1024 Hz (coordinator, frame, plant running; SCHED_FIFO "
                     f"{c['priority']:.0f}): lateness p50 {c['lateness_p50_us']:.0f} us, p99 {c['lateness_p99_us']:.0f} "
                     f"us, max {c['lateness_max_us']:.0f} us, {c['late_samples_pct']:.2f} % late (> 98 us), "
                     f"{c['held_samples_pct']:.2f} % held; J2 " + " / ".join(f"{v:.2f}" for v in c["J2_own"])
                     + " % (lockstep " + " / ".join(f"{v:.2f}" for v in c["J2_lockstep"]) + "), J7 "
                     + " / ".join(f"{v:.2f}" for v in c["J7_own"]) + " % (lockstep "
                     + " / ".join(f"{v:.2f}" for v in c["J7_lockstep"]) + ")")
    lines += large_and_floors(f)
    if "wan" in f:
        from hybridsim.coordinator.bench_wan import format_wan

        lines += ["across an emulated network (the maRTHS test, its site on its own clock; J2/J7 of the benchmark's "
                  "loop across it):", format_wan(f["wan"])]
    if "long_run" in f:
        from hybridsim.coordinator.bench_longrun import format_long_run

        lines += ["long runs (record repeated ten times; steps/s over the first and last tenth):",
                  format_long_run(f["long_run"])]
    lines += [f"FAILED {name}: {error}" for name, error in f.get("failed", {}).items()]
    return "\n".join(lines)


def large_and_floors(f: dict[str, Any]) -> list[str]:
    """The lines of ``large_model`` and ``step_floors`` when the figures have them."""
    from hybridsim.coordinator.bench_floor import format_floors
    from hybridsim.coordinator.bench_large import format_large_model

    return ((format_large_model(f["large_model"]) if "large_model" in f else [])
            + (format_floors(f["step_floors"]) if "step_floors" in f else []))
