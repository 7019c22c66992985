"""The maRTHS experiment's rehearsal trials: its nominal plant, then N plants drawn from the benchmark's uncertainty.

The experimental site's virtual lab is the identified 2x2 plant; its declared uncertainty is the benchmark's
(Condori Uribe et al. 2023, SPEC §8.2, §15): trial i = 1..N is plant seed 1000 + i, noise seed 2000 + i
(:func:`hybridsim.coordinator.problems.marths.loop.trial_specs`), trial 0 the nominal plant.  Each trial is the
in-process loop of the same record, scale and compensators as the experiment file's run, and yields the peaks
the site's limits are set against: at the interface DOFs (U27, U21, U29 in the site's order) the commanded
displacement and its velocity over the step (the numerical substructure's target; U29's is not logged by the
loop) and the feedback force; per actuator the command's stroke, velocity and tracking error.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.campaign.runner import run_campaign
from hybridsim.coordinator.problems.executors import Resources
from hybridsim.coordinator.problems.marths import campaign, loop, parts
from hybridsim.coordinator.problems.marths.evaluation import criteria
from hybridsim.coordinator.rehearse.actuator_figures import figures
from hybridsim.coordinator.rehearse.bisection import largest_stable
from hybridsim.modules.experimental.module import build_site
from hybridsim.modules.plant.knobs import KnobbedActuators
from hybridsim.wire.contract import ModuleError

GAIN_LOSS_BRACKET = (0.0, 0.95)
"""the plant gain losses the gain margin is sought between: none, and 95 % (a plant answering 5 % of its command)"""

DELAY_BRACKET = (0, 256)
"""the added actuator delays (samples; 0 and 250 ms at 1024 Hz) the delay margin is sought between"""

MM = 1e-3
"""m per mm (the loop logs strokes in mm)"""


def trial_specs(evaluation: dict[str, Any] | None, trials: int, duration: float | None) -> list[loop.RunSpec]:
    """The nominal run and ``trials`` uncertain plants of an experiment whose ``[evaluation]`` is maRTHS."""
    if not evaluation or evaluation.get("problem") != "marths":
        raise UsageError("rehearse: only an experiment with the maRTHS plant uncertainty can be rehearsed today "
                         "(its [evaluation] problem = \"marths\"; other sites declare no uncertainty yet)")
    given = {key: evaluation[key] for key in ("record", "scale") if key in evaluation}
    try:
        base = loop.RunSpec(plant="uncertain", duration=duration, **given)
    except ValueError as exc:
        raise UsageError(f"evaluation: {exc}") from None
    return loop.trial_specs(base, trials)


def trial_name(spec: loop.RunSpec, index: int) -> str:
    """How the sheet names a trial: its number and plant seed."""
    return f"trial {index} (nominal plant)" if spec.plant_seed is None else f"trial {index} (plant seed {spec.plant_seed})"


def run_trial(spec: loop.RunSpec, keep_history: bool = True) -> campaign.TrialResult | str:
    """One trial, or why it stopped (its runaway guard, a diverged loop): a top-level function for the executors."""
    try:
        return campaign.run_one(spec, "inprocess", keep_history)
    except (ModuleError, RunStopped) as exc:
        return str(exc)


def run_trials(specs: Sequence[loop.RunSpec], executor: str, workers: int,
               scheduler: str | None) -> list[campaign.TrialResult | str]:
    """Every trial, in order, as a campaign of the campaign runner (:class:`campaign.Trials`, its files in a
    temporary folder) on ``executor`` (serial, pool of ``workers``, or Dask at ``scheduler`` / a local cluster);
    a trial that stopped (its runaway guard, a diverged loop) is why."""
    with tempfile.TemporaryDirectory(prefix="rehearse-marths-") as folder:
        subject = campaign.Trials()
        rows = run_campaign(subject, [campaign.run_of(spec) for spec in specs], folder, executor,
                            Resources(workers, scheduler))
        return [subject.result(row) if row.status == "completed" else row.summary.get("stop_reason", row.status)
                for row in rows]


def gain_margin(spec: loop.RunSpec, tolerance: float) -> float:
    """The largest loss of plant gain (fraction; the plant's output times 1 - loss) at which ``spec``'s run
    completes (neither its runaway guard nor divergence stops it), by bisection to ``tolerance``."""
    def completes(loss: float) -> bool:
        return not isinstance(run_trial(replace(spec, plant_gain=1.0 - loss), keep_history=False), str)

    return largest_stable(completes, *GAIN_LOSS_BRACKET, tolerance)


ACTUATORS = ("actuator 1", "actuator 2")
"""how the sheet names the site's actuators (its limits of gate and actuators tables)"""


def delayed_tracking(spec: loop.RunSpec, samples: int) -> float | None:
    """The largest RMS tracking error of the actuators (%, the benchmark's J2) of ``spec``'s run with its plant
    ``samples`` samples late (the lab's delay knob, :class:`KnobbedActuators`); None when the run stops (its guard, divergence)."""
    lab = parts.lab(spec.plant, spec.plant_seed, spec.noise, spec.noise_seed, spec.shared_noise, spec.daq_in_loop,
                    spec.plant_gain)
    channels = len(lab.daq.gains)
    lab.actuators = KnobbedActuators(lab.actuators, [samples * parts.DT] * channels, [1.0] * channels, parts.DT)
    site = build_site(loop.site_config(spec), lab)
    try:
        logs = loop.simulate(spec, loop.InProcessSide(site, iterative=spec.iterative))
    except (ModuleError, RunStopped):
        return None
    record = {name: site.record.array(name) for name in ("measured_strokes", "commands")}
    return max(criteria(loop.history(spec, logs, record), parts.SAMPLE_RATE)["J2"])


def delay_margin(spec: loop.RunSpec, tracking_percent: float) -> int:
    """The largest added actuator delay (whole samples) at which ``spec``'s run completes with its RMS tracking
    error (J2) under ``tracking_percent``: the RLS-AC compensator adapts to a delay, so the run keeps going far
    beyond it, its tracking error growing with the delay; the bisection (to one sample) finds where it crosses."""
    def tracks(samples: float) -> bool:
        error = delayed_tracking(spec, int(samples))
        return error is not None and error < tracking_percent

    return int(largest_stable(tracks, *DELAY_BRACKET, 1.0))


def site_peaks(history: loop.History) -> dict[tuple[str, str], list[float | None]]:
    """Peak |value| of each quantity a site limits (envelope.UNITS), None where the loop does not log it: at the
    three interface DOFs displacement (m, rad), velocity (m/s, rad/s), force (N, N*m); per actuator the command's
    stroke (m), its increment from the stroke measured before it (m; the site's record logs that reading in the
    command's row) and that over the sample (m/s), as the gate measures them.  The maRTHS site has no load cells: actuator forces None."""
    dt = 1.0 / parts.SAMPLE_RATE
    shown = np.column_stack([history.numerical[:, 0] * MM, history.numerical[:, 1]])
    displacement = np.max(np.abs(shown), axis=0).tolist()
    velocity = (np.max(np.abs(np.diff(shown, axis=0)), axis=0) / dt).tolist()
    commands, measured = history.commands * MM, history.measured_strokes * MM
    increment = np.max(np.abs(commands - measured), axis=0)
    return {("limits", "displacement"): [*displacement, None], ("limits", "velocity"): [*velocity, None],
            ("limits", "force"): np.max(np.abs(history.feedback), axis=0).tolist(),
            ("gate", "increment"): increment.tolist(), ("gate", "velocity"): (increment / dt).tolist(),
            ("actuators", "stroke"): np.max(np.abs(commands), axis=0).tolist(),
            ("actuators", "force"): [None] * commands.shape[1]}


def actuator_figures(history: loop.History, piston_area: Sequence[float] | None) -> list[dict[str, float | None]]:
    """Per actuator, :func:`hybridsim.coordinator.rehearse.actuator_figures.figures` of the trial's logs."""
    return figures(history.commands * MM, history.target_strokes * MM, history.measured_strokes * MM,
                   parts.SAMPLE_RATE, piston_area)
