"""`wan` of `hybridsim bench --json`: real-time testing across emulated round trips of 0, 5, 20 and 60 ms.

For each round trip R (jitter R / 10, the path of :mod:`hybridsim.wire.network` in front of the lab):

- **the step it can meet**: the design-card maRTHS topology (coordinator, frame daemon, the experimental site
  with its virtual plant in its process, as a lab's controller has it) with the site on its own clock at
  1024 Hz and the predictor-corrector (``clock = "own"``), at the step Dt = M / 1024 s the path meets
  (:func:`samples_per_step`: the target arrives before the step's ``slow`` share, 0.6 by default).  As in
  OpenFresco's three loops, the site's clock keeps the time and the coordinator is event-driven: it sends the
  next target as soon as it has the last step's forces (no ``--realtime`` pacing, which would be a second
  clock).  The figures are the site clock's counters: the mean wall time of a step over its target
  (``clock_mean_step_s`` / ``clock_target_step_s``), the % of slowed steps and of held samples;
- **the maRTHS J2 and J7 at that latency**: the benchmark's own loop (``hybridsim benchmark marths``, 1024 Hz
  integration, one control sample per step) with the site daemon on its own clock across the same path
  (:func:`hybridsim.coordinator.problems.marths.daemons.run_on_daemons`).  A step cannot take less than a round
  trip, so this run takes about R x 1024 wall seconds per simulated second: the samples between two targets
  hold, and the criteria take the samples that ended the steps.

OpenFresco's published figure to compare with: between two labs 60 miles apart, a mean step of 19.88 ms against
a 19.53 ms target, 0.8 % of the steps slowed (Schellenberg et al., PEER 2009/104).
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hybridsim.coordinator.simulation import run_experiment
from hybridsim.wire.network import Network, netem_refusal

ROUND_TRIPS_S = (0.0, 0.005, 0.020, 0.060)
SAMPLE_S = 1.0 / 1024
SLOW_SHARE = 0.6
"""the site clock's default event_driven.slow: past this share of the step without a target it slows"""
WORK_S = 0.004
"""what a step costs besides the round trip (the coordinator's integration, the frame daemon, the site's reply),
on this loaded 2-core machine (s)"""
OPENFRESCO = {"target_step_ms": 19.53, "mean_step_ms": 19.88, "mean_step_over_target": 19.88 / 19.53,
              "slowed_steps_pct": 0.8, "source": "Schellenberg et al., PEER 2009/104 (two labs 60 miles apart)"}
SITE_CLOCK = {"clock": "own", "command_generation": {"scheme": "predictor-corrector", "order": 2}}
"""the site's keys that put it on its own clock with the predictor-corrector (docs/realtime.md)"""


def samples_per_step(round_trip_s: float, jitter_s: float, minimum: int = 10) -> int:
    """The control samples M of the shortest step Dt = M / 1024 s that a path meets: the next target (a round trip
    at worst 2 jitter_s late, plus the step's work) arrives before the clock's slow share of the step."""
    return max(minimum, math.ceil((round_trip_s + 2 * jitter_s + WORK_S) / (SLOW_SHARE * SAMPLE_S)))


def path(round_trip_s: float, loss: float = 0.0, seed: int = 22) -> Network:
    """The emulated path of a round trip: jitter a tenth of it."""
    return Network(round_trip_s, round_trip_s / 10, loss, seed=seed)


def realtime_across(network: Network, duration_s: float, samples: int | None = None) -> dict[str, Any]:
    """The design card in real time across ``network`` at the step it meets (see the module's docstring)."""
    from hybridsim.coordinator.problems.marths.hybrid import design_card

    samples = samples or samples_per_step(network.round_trip_s, network.jitter_s)
    with tempfile.TemporaryDirectory(prefix="hybridsim-wan-") as folder:
        experiment = design_card(Path(folder), duration_s, dt=samples * SAMPLE_S, plant_daemon=False)
        modules = []
        for module in experiment.modules:
            if module.kind == "experimental":
                module.config.update(SITE_CLOCK)
                module = dataclasses.replace(module, network=network)
            modules.append(module)
        summary = run_experiment(dataclasses.replace(experiment, modules=tuple(modules))).summary
    site = next(summary["modules"][m.name] for m in modules if m.kind == "experimental")
    return {
        "round_trip_ms": 1e3 * network.round_trip_s, "jitter_ms": 1e3 * network.jitter_s, "loss": network.loss,
        "samples_per_step": samples, "target_step_ms": 1e3 * site["clock_target_step_s"],
        "mean_step_ms": 1e3 * site["clock_mean_step_s"],
        "mean_step_over_target": site["clock_mean_step_s"] / site["clock_target_step_s"],
        "slowed_steps_pct": 100.0 * site["clock_slowed_steps"] / site["clock_steps"],
        "held_samples_pct": 100.0 * site["clock_held_samples"] / site["clock_samples"],
        "late_samples_pct": 100.0 * site["clock_late_samples"] / site["clock_samples"], "steps": site["clock_steps"],
        "lost_segments": site.get("network_lost_segments", 0.0),
    }


def benchmark_across(network: Network, duration_s: float) -> dict[str, Any]:
    """J2 and J7 (both actuators / both measures) of the benchmark's loop with its site across ``network``."""
    from hybridsim.coordinator.problems.marths import loop, parts
    from hybridsim.coordinator.problems.marths.daemons import run_on_daemons
    from hybridsim.coordinator.problems.marths.evaluation import criteria

    timings: dict[str, float] = {}
    history = run_on_daemons(loop.RunSpec(duration=duration_s), clock=True, network=network, timings=timings)
    j = criteria(history, parts.SAMPLE_RATE)
    site = history.info["site"]
    return {"J2": j["J2"], "J7": j["J7"], "duration_s": duration_s, "loop_wall_s": timings["loop_s"],
            "held_samples_pct": 100.0 * site["clock_held_samples"] / site["clock_samples"]}


def wan_figures(duration_s: float = 10.0, j_duration_s: float = 8.0,
                round_trips_s: Sequence[float] = ROUND_TRIPS_S) -> dict[str, Any]:
    """``wan`` of ``hybridsim bench --json``: one entry per round trip, OpenFresco's figure, and whether netem is
    here (the emulation is the proxy either way)."""
    entries = []
    for round_trip_s in round_trips_s:
        network = path(round_trip_s)
        entry = realtime_across(network, duration_s)
        entry["marths"] = benchmark_across(network, j_duration_s)
        entry["J2"], entry["J7"] = entry["marths"]["J2"], entry["marths"]["J7"]
        entries.append(entry)
    refusal = netem_refusal()
    return {"round_trips": entries, "openfresco": OPENFRESCO,
            "emulation": "TCP proxy (hybridsim.wire.network)",
            "netem": "available" if refusal is None else f"not available: {refusal}"}


def format_wan(wan: dict[str, Any]) -> str:
    """The table of the ``wan`` figures."""
    lines = [f"{'round trip':>11}{'step target':>13}{'mean step':>11}{'/ target':>10}{'slowed':>9}{'held':>8}"
             f"{'J2 % (act 1 / 2)':>19}{'J7 % (x / theta)':>19}"]
    for e in wan["round_trips"]:
        lines.append(f"{e['round_trip_ms']:>8.0f} ms{e['target_step_ms']:>10.2f} ms{e['mean_step_ms']:>8.2f} ms"
                     f"{e['mean_step_over_target']:>10.4f}{e['slowed_steps_pct']:>8.2f}%{e['held_samples_pct']:>7.2f}%"
                     f"{e['J2'][0]:>11.2f} / {e['J2'][1]:<5.2f}{e['J7'][0]:>11.2f} / {e['J7'][1]:<5.2f}")
    of = wan["openfresco"]
    lines.append(f"OpenFresco ({of['source']}): mean step {of['mean_step_ms']} ms over a {of['target_step_ms']} ms "
                 f"target ({of['mean_step_over_target']:.4f}), {of['slowed_steps_pct']} % of the steps slowed")
    lines.append(f"network: {wan['emulation']}; Linux netem {wan['netem']}")
    return "\n".join(lines)
