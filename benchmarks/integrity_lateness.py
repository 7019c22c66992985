"""The maRTHS run's 1024 Hz lateness with the integrity indicators off and on, side by side.

    python benchmarks/integrity_lateness.py [--seconds 10] [--pairs 2] [--json]

Runs the design card (examples/marths.toml: coordinator, frame, site and plant, the daemons on their step
links) in real time at dt = 1/1024 s for SECONDS of record, ``pairs`` times off then on (alternating, so a
change of the machine's load falls on both); "on" watches the site with every indicator (energy error, tracking,
delay; thresholds never crossed, action warn).  Prints each run's late steps, step p50 / p99 and largest
lateness, and the load average beside each.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hybridsim.coordinator.integrity.rules import site_rules
from hybridsim.coordinator.problems.marths.hybrid import design_card
from hybridsim.coordinator.simulation import run_experiment

WATCH_ALL = {"energy_error": 1e9, "tracking": 1e9, "delay": 1e9, "action": "warn"}


def lateness(seconds: float, indicators: bool) -> dict[str, Any]:
    """One real-time run's figures (us, %), the indicators ``on`` or off."""
    with tempfile.TemporaryDirectory(prefix="hybridsim-bench-") as folder:
        experiment = design_card(Path(folder), seconds)
        if indicators:
            rules = site_rules(WATCH_ALL, [(m.name, m.kind) for m in experiment.modules])
            experiment = dataclasses.replace(experiment, integrity=rules)
        summary = run_experiment(experiment, realtime=True).summary
    return {"indicators": "on" if indicators else "off", "late_steps_pct": summary["late_steps_pct"],
            "step_p50_us": summary["step_time_us"]["p50"], "step_p99_us": summary["step_time_us"]["p99"],
            "max_lateness_us": summary["max_lateness_us"], "watched": sorted(summary.get("integrity", {})
                                                                                .get("modules", {})),
            "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of record a run (default 10)")
    parser.add_argument("--pairs", type=int, default=2, help="off/on pairs (default 2)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = [lateness(args.seconds, on) for _ in range(args.pairs) for on in (False, True)]
    if args.json:
        print(json.dumps(runs, indent=1))
        return
    for r in runs:
        print(f"indicators {r['indicators']:3}: {r['late_steps_pct']:.2f} % late, step p50 {r['step_p50_us']:.0f} us, "
              f"p99 {r['step_p99_us']:.0f} us, max lateness {r['max_lateness_us']:.0f} us (load {r['load']:.1f})")


if __name__ == "__main__":
    main()
