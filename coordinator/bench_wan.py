"""`wan` of `hybridsim bench --json`: testing across emulated round trips of 0, 5, 20 and 60 ms.

For each round trip R (jitter R / 10: the path of :mod:`hybridsim.wire.network` in front of the lab):

- **the step it can meet** (:func:`step_across`): OpenFresco's arrangement, as in its published test (Schellenberg
  et al., PEER 2009/104): the integrator and the numerical model in one process (the coordinator with the maRTHS
  frame in process), the lab across the network (the experimental site with its virtual plant in its process, as
  a lab's controller has it) on its own clock at 1024 Hz with the predictor-corrector (``clock = "own"``, docs/
  realtime.md).  The integration step is Dt = 20 / 1024 s = 19.53 ms, OpenFresco's target.  The site's clock keeps
  the time; the coordinator is event-driven: it sends the next target as soon as it has the last step's forces
  (no ``--realtime`` pacing, which would be a second clock).  The step the path meets is the shortest wall step
  M / 1024 s whose next target arrives before the clock's ``slow`` share of it (:func:`samples_per_step`); when
  that is longer than Dt the test runs slowed by ``time_scale`` = M / 20 (continuous pseudo-dynamic).  The
  figures are the site clock's counters: the mean wall time of a step over its target, the % of slowed steps
  and of held samples.  Where the step is longer than Dt, ``at_real_time`` tries Dt itself, which the path
  cannot meet, over the record's first 5 s: slowed or held at every step, the test may stop (its compensators
  saturate the servo), and then the entry says where.
  The coordinator's thread runs under SCHED_FIFO where permitted (the proxy's threads inherit it), the site's
  clock thread too, as ``hybridsim benchmark marths --topology own-clock`` does;
- **a lost packet and a late reply** (``lossy``): the same at 20 ms with 0.5 % of the segments lost (each resent
  by TCP some 220 ms later: the target arrives late, the clock slows or holds), with the largest change of the
  command in one control sample beside the lossless runs' (``max_command_change_mm``, per actuator): a hold
  never makes a jump;
- **the maRTHS J2 and J7 at that latency** (:func:`benchmark_across`): the benchmark's own loop (1024 Hz
  integration, one control sample per step) with the site daemon on its own clock across the same path
  (:func:`hybridsim.coordinator.problems.marths.daemons.run_on_daemons`), over the record's first
  ``j_duration_s`` s (the shaking starts at 5.4 s and peaks at 7.0 s).  A step cannot take less than a round
  trip, so the samples between two targets hold (the criteria take the samples that ended the steps) and the
  run takes about max(R, 1 / 1024 s) x 1024 wall seconds per simulated second: 8 s of record across 60 ms take
  some 8 minutes.

OpenFresco's published figure: between two labs 60 miles apart, a mean step of 19.88 ms against a 19.53 ms target,
0.8 % of the steps slowed.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.wire.network import Network, netem_refusal

ROUND_TRIPS_S = (0.0, 0.005, 0.020, 0.060)
SAMPLE_S = 1.0 / 1024
STEP_SAMPLES = 20
"""Dt = 20 / 1024 s = 19.53 ms: OpenFresco's published target, and the longest multiple of 1/1024 s that the 50 Hz
El Centro record allows"""
SLOW_SHARE = 0.6
"""the site clock's default event_driven.slow: past this share of the step without a target it slows"""
WORK_S = 0.004
"""what a step costs besides the round trip, on this loaded 2-core machine (s): the coordinator's integration and
the site's reply (measured: the arrival share's p99 at 0 ms is 0.2 of 19.53 ms)"""
LOSS = 0.005
"""the share of segments the lossy 20 ms path loses"""
REST_S = 5.0
"""the first seconds of the El Centro record, before the shaking (s)"""
OPENFRESCO = {"target_step_ms": 19.53, "mean_step_ms": 19.88, "mean_step_over_target": 19.88 / 19.53,
              "slowed_steps_pct": 0.8, "source": "Schellenberg et al., PEER 2009/104 (two labs 60 miles apart)"}
GENERATION = {"scheme": "predictor-corrector", "order": 1}
"""the site's command generation: first order (second order with the design card's RLS-AC compensators saturates
the servo at 1.3 s on its own clock, at 6.3 s in lockstep)"""


def samples_per_step(round_trip_s: float, jitter_s: float, minimum: int = STEP_SAMPLES) -> int:
    """The control samples M of the shortest step M / 1024 s that a path meets: the next target (a round trip, at
    worst 2 jitter_s late, plus the step's work) arrives before the clock's slow share of the step."""
    return max(minimum, math.ceil((round_trip_s + 2 * jitter_s + WORK_S) / (SLOW_SHARE * SAMPLE_S)))


def path(round_trip_s: float, loss: float = 0.0, seed: int = 22) -> Network:
    """The emulated path of a round trip: jitter a tenth of it."""
    return Network(round_trip_s, round_trip_s / 10, loss, seed=seed)


def step_across(network: Network, duration_s: float, samples: int | None = None) -> dict[str, Any]:
    """The maRTHS test at Dt = 20 / 1024 s across ``network`` with the site on its own clock at ``samples`` per step
    (default: the step the path meets), OpenFresco's arrangement (see the module's docstring)."""
    from hybridsim.coordinator.problems.marths.daemons import CLOCK, LOOP_PRIORITY
    from hybridsim.coordinator.problems.marths.hybrid import design_card
    from hybridsim.modules.experimental.clock import realtime_thread

    samples = samples or samples_per_step(network.round_trip_s, network.jitter_s)
    time_scale = samples / STEP_SAMPLES
    site_keys = {**CLOCK, "command_generation": GENERATION, **({"time_scale": time_scale} if time_scale > 1 else {})}
    with tempfile.TemporaryDirectory(prefix="hybridsim-wan-") as folder:
        experiment = design_card(Path(folder), duration_s, dt=STEP_SAMPLES * SAMPLE_S, plant_daemon=False,
                                 site=site_keys)
        modules = []
        for module in experiment.modules:
            if module.kind == "experimental":
                module = dataclasses.replace(module, network=network)
            else:  # the numerical model in the integrator's process, as OpenSees with OpenFresco
                module = dataclasses.replace(module, address=None)
            modules.append(module)
        with realtime_thread(LOOP_PRIORITY):
            result = run_experiment(dataclasses.replace(experiment, modules=tuple(modules)))
        name = next(m.name for m in modules if m.kind == "experimental")
        with h5py.File(result.output, "r") as f:
            commands = f[f"modules/{name}/records/commands"][()]
    summary = result.summary
    site = summary["modules"][name]
    return {
        "round_trip_ms": 1e3 * network.round_trip_s, "jitter_ms": 1e3 * network.jitter_s, "loss": network.loss,
        "samples_per_step": samples, "time_scale": time_scale, "target_step_ms": 1e3 * site["clock_target_step_s"],
        "mean_step_ms": 1e3 * site["clock_mean_step_s"],
        "mean_step_over_target": site["clock_mean_step_s"] / site["clock_target_step_s"],
        "slowed_steps_pct": 100.0 * site["clock_slowed_steps"] / site["clock_steps"],
        "held_samples_pct": 100.0 * site["clock_held_samples"] / site["clock_samples"],
        "late_samples_pct": 100.0 * site["clock_late_samples"] / site["clock_samples"], "steps": site["clock_steps"],
        "scheduling": {"site_priority": site["clock_priority"]},
        "lost_segments": site.get("network_lost_segments", 0.0),
        "max_command_change_mm": np.nanmax(np.abs(np.diff(commands, axis=0)), axis=0).tolist(),
    }


def benchmark_across(network: Network, duration_s: float) -> dict[str, Any]:
    """J2 and J7 (actuators 1 / 2; x / theta, %) of the benchmark's loop with its site across ``network``."""
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
                round_trips_s: Sequence[float] = ROUND_TRIPS_S, loss: float = LOSS) -> dict[str, Any]:
    """``wan`` of ``hybridsim bench --json``: one entry per round trip (J2 and J7 None when ``j_duration_s`` is 0),
    the 20 ms path losing a share ``loss`` of its segments, OpenFresco's figure, and whether netem is here (the
    emulation is the proxy either way)."""
    entries = []
    for round_trip_s in round_trips_s:
        network = path(round_trip_s)
        entry = step_across(network, duration_s)
        if entry["samples_per_step"] > STEP_SAMPLES:  # and the real-time step, which the path cannot meet
            try:
                entry["at_real_time"] = step_across(network, min(duration_s, REST_S), STEP_SAMPLES)
            except RunStopped as exc:
                entry["at_real_time"] = {"stopped": str(exc)}
        entry["J2"] = entry["J7"] = None
        if j_duration_s > 0:
            entry["marths"] = benchmark_across(network, j_duration_s)
            entry["J2"], entry["J7"] = entry["marths"]["J2"], entry["marths"]["J7"]
        entries.append(entry)
    refusal = netem_refusal()
    return {"round_trips": entries, "lossy": step_across(path(0.020, loss), duration_s), "openfresco": OPENFRESCO,
            "emulation": "TCP proxy (hybridsim.wire.network)",
            "netem": "available" if refusal is None else f"not available: {refusal}"}


def format_wan(wan: dict[str, Any]) -> str:
    """The table of the ``wan`` figures."""
    lines = [f"{'round trip':>11}{'step target':>13}{'mean step':>11}{'/ target':>10}{'slowed':>9}{'held':>8}"
             f"{'J2 % (act 1 / 2)':>19}{'J7 % (x / theta)':>19}"]

    def row(label: str, e: dict[str, Any], j: str) -> str:
        return (f"{label:>11}{e['target_step_ms']:>10.2f} ms{e['mean_step_ms']:>8.2f} ms{e['mean_step_over_target']:>10.4f}"
                f"{e['slowed_steps_pct']:>8.2f}%{e['held_samples_pct']:>7.2f}%{j}")

    for e in wan["round_trips"]:
        j = "" if e["J2"] is None else f"{e['J2'][0]:>11.2f} / {e['J2'][1]:<5.2f}{e['J7'][0]:>11.2f} / {e['J7'][1]:<5.2f}"
        lines.append(row(f"{e['round_trip_ms']:.0f} ms", e, j))
        if "stopped" in e.get("at_real_time", {}):
            lines.append(f"{'(real time)':>11}  stopped: {e['at_real_time']['stopped']}")
        elif "at_real_time" in e:
            lines.append(row("(real time)", e["at_real_time"], ""))
    lossy = wan["lossy"]
    lines.append(row(f"{lossy['round_trip_ms']:.0f} ms lossy", lossy, "")
                 + f"  {100 * lossy['loss']:g} % loss: {lossy['lost_segments']:.0f} segments lost and resent")
    for e in [*wan["round_trips"], lossy]:
        lines.append(f"largest command change in one sample, {e['round_trip_ms']:.0f} ms, {100 * e['loss']:g} % loss: "
                     + " / ".join(f"{v:.3f}" for v in e["max_command_change_mm"]) + " mm")
    of = wan["openfresco"]
    lines.append(f"OpenFresco ({of['source']}): mean step {of['mean_step_ms']} ms over a {of['target_step_ms']} ms "
                 f"target ({of['mean_step_over_target']:.4f}), {of['slowed_steps_pct']} % of the steps slowed")
    lines.append(f"network: {wan['emulation']}; Linux netem {wan['netem']}")
    return "\n".join(lines)
