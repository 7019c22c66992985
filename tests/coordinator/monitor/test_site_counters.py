"""A site on its own clock, a real daemon across an emulated path longer than its step: the live monitor and the
printed progress line follow its event-driven counters during the run, and they end as the summary's."""

from __future__ import annotations

import io
import re
import tomllib
from pathlib import Path

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.pacing import ProgressBar
from hybridsim.v1 import monitor_pb2 as pb
from tests.coordinator.monitor.runs import monitored_run

SETUPS = Path(__file__).resolve().parents[3] / "examples" / "setups"
COUNTERS = ("clock_slowed_steps", "clock_held_samples", "clock_late_samples")
STEPS = 160


def test_the_monitor_follows_the_site_clock_counters_and_ends_on_the_summarys(tmp_path: Path) -> None:
    """examples/setups/one_actuator.toml, 160 steps of 5 ms (five 1 ms samples), its site a local daemon on its own
    clock across an 8 ms round trip: each target arrives at least 8 ms after the previous step ended, past the
    hold share (0.9 of 5 ms), so the steps are slowed and hold (the counters grow during the whole run)."""
    site = tomllib.loads((SETUPS / "one_actuator_site.toml").read_text())
    site.update(clock="own", command_generation={"scheme": "predictor-corrector", "order": 2})
    table = tomllib.loads((SETUPS / "one_actuator.toml").read_text())
    table["experiment"]["duration"] = STEPS * 0.005
    table["modules"][0] = {"name": "column", "kind": "experimental", "config": site, "address": "local",
                           "network": {"round_trip_s": 0.008, "seed": 1}}
    bar = ProgressBar(io.StringIO(), log_every_s=0.0)
    with monitored_run(parse_experiment(table, base_dir=SETUPS), tmp_path / "run.h5", bar=bar) as run:
        events = list(run.stub().Watch(pb.WatchRequest(), timeout=120))
        run.thread.join(60)
    stats = run.result.summary["modules"]["column"]
    seen = [(p.step, p.state, {c.module: dict(c.values) for c in p.counters}) for p in (e.frame.progress
                                                                                       for e in events[1:])]
    live = [(step, counters["column"]) for step, state, counters in seen if state == "running" and counters]
    assert len(live) >= 5, f"only {len(live)} running frames carried the counters"
    for key in COUNTERS:
        values = [counters[key] for _, counters in live] + [seen[-1][2]["column"][key]]
        assert values == sorted(values), f"{key} decreased during the run: {values}"
        assert values[-1] == stats[key], f"{key}: the monitor ended on {values[-1]}, the summary says {stats[key]}"
    assert seen[-1][1] == "completed" and stats["clock_steps"] == STEPS
    # every step but the first (its target starts the clock) waits for its target past the slow share, unless the
    # clock thread itself was stalled that long by the machine's load (its samples then find the target there)
    assert STEPS / 2 <= stats["clock_slowed_steps"] <= STEPS - 1 and stats["clock_held_samples"] >= STEPS / 2
    slowed = [counters["clock_slowed_steps"] for _, counters in live]
    assert any(0 < value < stats["clock_slowed_steps"] for value in slowed)  # seen mid-run, not only at the end
    for step, counters in live:  # at most the steps the run had completed when the frame was made
        assert counters["clock_slowed_steps"] <= step
    lines = [line for line in bar.stream.getvalue().splitlines() if "site column:" in line]
    assert lines, "the progress line never showed the site's counters"
    printed = re.search(r"site column: (\d+) slowed steps, (\d+) held, (\d+) late samples", lines[-1])
    assert printed is not None and [float(v) for v in printed.groups()] == [stats[k] for k in COUNTERS]
