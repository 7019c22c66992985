"""A rehearsal: the experiment's trials under its sites' uncertainty, set against the site's limits, as a sheet.

``[rehearse]`` in the experiment file (optional) gives the trials, how much of the record to run and the
actuators' piston area; the command line's ``--trials`` overrides the file's.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.experiment import Experiment, load_experiment
from hybridsim.coordinator.experiment_schema import REHEARSE, default
from hybridsim.coordinator.problems.marths.loop import RunSpec
from hybridsim.coordinator.problems.marths.parts import SAMPLE_RATE
from hybridsim.coordinator.rehearse import marths_trials, sheet, site_margins, site_trials
from hybridsim.coordinator.rehearse.envelope import UNITS, envelope, site_limits
from hybridsim.modules.experimental.controls.plant import plant_channels


def _site_config(experiment: Experiment) -> dict[str, Any]:
    name = (experiment.evaluation or {}).get("site")
    return next((m.config for m in experiment.modules if m.name == name), {})


def _piston_area(table: dict[str, Any], actuators: int) -> list[float] | None:
    area = table.get("piston_area")
    if isinstance(area, list) and len(area) != actuators:
        raise UsageError(f"rehearse.piston_area: give one area or {actuators} (one per actuator), not {len(area)}")
    return None if area is None else [float(area)] * actuators if isinstance(area, (int, float)) else list(area)


def rehearse(path: Path, trials: int | None = None, executor: str = "serial", workers: int = 2,
             scheduler: str | None = None, out: Path = Path("rehearsal")) -> dict[str, Any]:
    """The sheet of a rehearsal of the experiment file at ``path`` (``out``: the sheet's folder, where a
    rehearsal of virtual-lab sites keeps its trials' results files)."""
    experiment = load_experiment(path)
    table = experiment.table.get("rehearse", {})
    n = trials if trials is not None else default(REHEARSE, table, "trials")
    if (experiment.evaluation or {}).get("problem") == "marths":
        return _marths(path, experiment, table, n, executor, workers, scheduler)
    if not table.get("random") and (trials is not None or "trials" in table):
        raise UsageError(f"rehearse: {n} drawn trial(s) asked for but no [rehearse.random] is declared, so each "
                         "would equal trial 0 (as written): declare [rehearse.random] (the uncertain keys and their "
                         "distributions) or drop --trials and rehearse.trials to rehearse trial 0 alone")
    return _sites(path, experiment, table, n, out, (executor, workers, scheduler))


def _judged(peaks: list[dict], ran: list[str], config: dict[str, Any], dofs: list[str], actuators: list[str],
            site: str, stopped: list[tuple[str, str]]) -> dict[str, Any]:
    """The sheet's verdict, its limits' rows and the peaks over the trials that ran (``dofs``, ``actuators``: how
    the rows name the site's interface DOFs and actuators)."""
    rows = [envelope(limit, [p[limit.table, limit.kind][limit.index] for p in peaks], ran)
            for limit in site_limits(config, dofs, actuators)]
    go, why = sheet.verdict(rows, stopped, site)
    return {"verdict": go, "why": why, "stopped": [f"{name}: {reason}" for name, reason in stopped], "limits": rows,
            "peaks": {f"{t}.{k}": sheet.distribution([p[t, k] for p in peaks]) for t, k in UNITS} if peaks else {},
            "unchecked": [r["limit"] for r in rows if not r["measured"]]}


def _marths(path: Path, experiment: Experiment, table: dict[str, Any], n: int, executor: str, workers: int,
            scheduler: str | None) -> dict[str, Any]:
    """The maRTHS benchmark's nominal plant and ``n`` drawn from its uncertainty, with its margins."""
    specs = marths_trials.trial_specs(experiment.evaluation, n, table.get("duration"))
    outcomes = marths_trials.run_trials(specs, executor, workers, scheduler)
    names = [marths_trials.trial_name(spec, i) for i, spec in enumerate(specs)]
    stopped = [(name, o) for name, o in zip(names, outcomes) if isinstance(o, str)]
    results = [o for o in outcomes if not isinstance(o, str)]
    ran = [name for name, o in zip(names, outcomes) if not isinstance(o, str)]
    peaks = [marths_trials.site_peaks(r.history) for r in results]
    config = _site_config(experiment)
    judged = _judged(peaks, ran, config, list(config.get("dofs", ())), list(marths_trials.ACTUATORS),
                     f"site {experiment.evaluation.get('site')!r}", stopped)
    area = _piston_area(table, 2)
    return {"experiment": str(path), "trials": names, **judged, **_margins(specs[0], names[0], table),
            "actuators": _actuators([marths_trials.actuator_figures(r.history, area) for r in results]),
            "piston_area": area,
            "criteria": {name: sheet.distribution([r.criteria[name] for r in results])
                         for name in (results[0].criteria if results else {})},
            "wall_s": [r.wall_s for r in results]}


def _sites(path: Path, experiment: Experiment, table: dict[str, Any], n: int, out: Path,
           where: tuple[str, int, str | None]) -> dict[str, Any]:
    """Trial 0 as written and ``n`` of ``[rehearse.random]``'s draws (none declared: trial 0 alone, said in the why); each virtual-lab site's peaks against its
    limits, its verdict and margins (``sites``), and the experiment's: GO when every site's is."""
    sites = site_trials.virtual_sites(experiment)
    for site in sites:  # before any run
        site_margins.check_delay_bracket(experiment, site.name, table)
    runs = site_trials.trials(table.get("random", {}), n)
    if "duration" in table:
        runs = [replace(run, values=(("experiment.duration", table["duration"]),)) for run in runs]
    rows = site_trials.run_trials(path, runs, out, *where)
    names = [site_trials.trial_name(run) for run in runs]
    done = [(name, row.output) for name, row in zip(names, rows) if row.status == "completed"]
    stopped = [(name, row.summary.get("stop_reason", f"the run ended {row.status} ({row.output})"))
               for name, row in zip(names, rows) if row.status != "completed"]
    counts = [plant_channels(site.config["backend"]["plant"]) for site in sites]
    area = _piston_area(table, sum(counts))
    per_site = [_site(experiment, site, done, stopped, table, out, len(sites) > 1,
                      None if area is None else area[sum(counts[:i]):sum(counts[:i + 1])])
                for i, site in enumerate(sites)]
    first = next((s for s in per_site if s["verdict"] != "GO"), None)
    rows_all = [row for s in per_site for row in s["limits"]]
    go, why = sheet.verdict(rows_all, stopped) if first is None else (first["verdict"], first["why"])
    if not table.get("random"):
        why += "; trial 0 (as written) alone ran: no [rehearse.random] is declared, so drawn trials would equal it"
    return {"experiment": str(path), "trials": names, "verdict": go, "why": why, "stopped": per_site[0]["stopped"],
            "limits": rows_all, "unchecked": [u for s in per_site for u in s["unchecked"]],
            "peaks": {key: d for s in per_site for key, d in s["peaks"].items()},
            "actuators": [a for s in per_site for a in s["actuators"]], "piston_area": area, "criteria": {},
            **{key: [s[key] for s in per_site if s[key] is not None] for key in ("gain_margin", "delay_margin")},
            "sites": per_site, "wall_s": [row.wall_s for row in rows if row.status == "completed"]}


def _site(experiment: Experiment, site: Any, done: list[tuple[str, str]], stopped: list[tuple[str, str]],
          table: dict[str, Any], out: Path, named: bool, area: list[float] | None) -> dict[str, Any]:
    """One site's sheet: its limits' envelopes over the trials that ran (``done``: name and results file), its
    verdict, actuators and margins; ``named``: its DOFs, actuators and peaks say the site (several sites)."""
    of = f" of site {site.name!r}" if named else ""
    control_dt = float(site.config["dt"])
    peaks = [site_trials.site_peaks(output, site.name, experiment.dt, control_dt) for _, output in done]
    actuators = [f"actuator {i + 1}{of}" for i in range(plant_channels(site.config["backend"]["plant"]))]
    judged = _judged(peaks, [name for name, _ in done], site.config, [f"{d}{of}" for d in site.config.get("dofs", ())],
                     actuators, f"site {site.name!r}", stopped)
    figures = _actuators([site_trials.actuator_figures(output, site.name, control_dt, area) for _, output in done])
    return {"site": site.name, **judged, "peaks": {f"{key}{of}": d for key, d in judged["peaks"].items()},
            "actuators": [{"name": name, **f} for name, f in zip(actuators, figures)],
            **site_margins.margins(experiment, site.name, table, out / "margins")}


def _margins(nominal: RunSpec, name: str, table: dict[str, Any]) -> dict[str, dict[str, Any] | None]:
    """The nominal trial's gain and delay margins (None: not sought)."""
    gain, delay = {"trial": name}, {"trial": name}
    if default(REHEARSE, table, "gain_margin"):
        gain["tolerance"] = default(REHEARSE, table, "gain_margin_tolerance")
        gain["loss"] = marths_trials.gain_margin(nominal, gain["tolerance"])
    if default(REHEARSE, table, "delay_margin"):
        delay["tracking_percent"] = default(REHEARSE, table, "delay_margin_tracking")
        delay["samples"] = marths_trials.delay_margin(nominal, delay["tracking_percent"])
        delay["s"] = delay["samples"] / SAMPLE_RATE
    return {"gain_margin": gain if "loss" in gain else None, "delay_margin": delay if "s" in delay else None}


def _actuators(figures: list[list[dict[str, float | None]]]) -> list[dict[str, Any]]:
    """Per actuator, each figure's distribution over the trials that ran (``figures``: per trial, per actuator)."""
    return [{key: None if figures[0][a][key] is None else sheet.distribution([[f[a][key]] for f in figures])
             for key in figures[0][a]} for a in range(len(figures[0]))] if figures else []
