"""The rehearsal trials of any experiment with an experimental site whose lab is a virtual one (``backend.plant``).

Trial 0 is the experiment as written; trial i = 1..N the same with the values of ``[rehearse.random]`` drawn from
seed i (the campaign's laws, hybridsim.coordinator.campaign.draws: normal, lognormal, uniform of a dotted key of
the experiment file).  Each trial is an ordinary run of the campaign runner's ``run_one``, with its own results file and its site's
own records (the command, measured stroke and load cell of every control sample); a trial the site's gate or
guard stops is a trial that stopped.  From those records and the interface's response come the peaks the site's
limits are set against (:data:`hybridsim.coordinator.rehearse.envelope.UNITS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.campaign.draws import with_draws
from hybridsim.coordinator.campaign.grid import Run
from hybridsim.coordinator.campaign.runner import Row, run_one
from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.experiment import Experiment
from hybridsim.coordinator.problems.executors import EXECUTORS, Resources
from hybridsim.coordinator.rehearse.actuator_figures import figures

TO_SI = {"mm": 1e-3, "m": 1.0, "N": 1.0}
"""a record column's unit -> SI"""


def virtual_sites(experiment: Experiment) -> list[Any]:
    """The experimental sites driving a virtual lab in their own process; one line when there is none."""
    sites = [m for m in experiment.modules if m.kind == "experimental" and "plant" in (m.config.get("backend") or {})]
    if not sites:
        raise UsageError("rehearse: the experiment has no experimental site with a virtual lab (backend.plant) and "
                         "is not the maRTHS benchmark ([evaluation] problem = \"marths\"): nothing to rehearse")
    return sites


def trials(random: Mapping[str, Mapping[str, Any]], count: int) -> list[Run]:
    """Trial 0 as written, then ``count`` trials of ``random``'s draws (none declared: trial 0 alone)."""
    return [Run((), 0)] + (with_draws([Run((), i) for i in range(1, count + 1)], random) if random else [])


def trial_name(run: Run) -> str:
    if not run.drawn:
        return f"trial {run.seed} (as written)"
    return f"trial {run.seed} ({', '.join(f'{key} = {value:.6g}' for key, value in run.drawn)})"


def run_trials(path: Path, runs: list[Run], out: Path, executor: str, workers: int,
               scheduler: str | None) -> list[Row]:
    """Every trial's row, in order, its results file in ``out/trials`` (workers spawned, as the campaign
    runner's: a forked one inherits a results writer it cannot wait for)."""
    (out / "trials").mkdir(parents=True, exist_ok=True)
    jobs = [(str(path), run, str(out / "trials")) for run in runs]
    return EXECUTORS[executor](run_one, jobs, Resources(workers, scheduler, "spawn"), None)


def _column(dataset: Any) -> np.ndarray:
    units = [str(u) for u in dataset.attrs.get("units", ())]
    return np.asarray(dataset[()], float) * np.array([TO_SI.get(u, 1.0) for u in units] or 1.0)


def actuator_figures(results: str, site: str, control_dt: float,
                     piston_area: Sequence[float] | None) -> list[dict[str, float | None]]:
    """Per actuator, :func:`hybridsim.coordinator.rehearse.actuator_figures.figures` of ``site``'s records in the
    results file (``control_dt``: the site's control sample, s)."""
    with h5py.File(results, "r") as f:
        records = f[f"modules/{site}/records"]
        commands, target, measured = (_column(records[name]) for name in ("commands", "target_strokes",
                                                                           "measured_strokes"))
    return figures(commands, target, measured, 1.0 / control_dt, piston_area)


def site_peaks(results: str, site: str, dt: float, control_dt: float) -> dict[tuple[str, str], list[float | None]]:
    """Peak |value| of each limited quantity of ``site`` in the results file: the interface DOFs' displacement
    (m, rad), velocity (its change over the step ``dt``, s) and force (N, N*m); per actuator the command (m), its
    increment from the stroke measured before it (m, as the gate measures it) and that over ``control_dt`` (m/s),
    and the load cell (N)."""
    with h5py.File(results, "r") as f:
        group, records = f[f"modules/{site}"], f[f"modules/{site}/records"]
        displacement, force = np.asarray(group["displacement"][()]), np.asarray(group["force"][()])
        commands, measured = _column(records["commands"]), _column(records["measured_strokes"])
        loads = _column(records["measured_loads"])
    increment = np.max(np.abs(commands - measured), axis=0)
    return {("limits", "displacement"): np.max(np.abs(displacement), axis=0).tolist(),
            ("limits", "velocity"): (np.max(np.abs(np.diff(displacement, axis=0)), axis=0) / dt).tolist(),
            ("limits", "force"): np.max(np.abs(force), axis=0).tolist(),
            ("gate", "increment"): increment.tolist(), ("gate", "velocity"): (increment / control_dt).tolist(),
            ("actuators", "stroke"): np.max(np.abs(commands), axis=0).tolist(),
            ("actuators", "force"): np.max(np.abs(loads), axis=0)[:commands.shape[1]].tolist()}
