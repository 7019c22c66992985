"""Run a campaign: every run of its subject into its own results file, made once, resumed if interrupted.

:func:`run_campaign` is the stable entry point (docs/campaigns.md): the subject (an experiment file, or a
problem's runs, :mod:`hybridsim.coordinator.campaign.subjects`), the runs
(:func:`hybridsim.coordinator.campaign.grid.expand`), an output folder and an executor of
:mod:`hybridsim.coordinator.problems.executors`.  A run whose file says ``completed`` is not run again (its
summary is read back); a run whose file was left ``running`` or stopped (its process or Dask worker killed) is
resumed from its last checkpoint where its subject can; otherwise it starts afresh at ``OUT/<run id>.h5``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hybridsim.coordinator.campaign.grid import Run
from hybridsim.coordinator.campaign.subjects.base import Subject
from hybridsim.coordinator.campaign.subjects.experiment import ExperimentFile
from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.problems.executors import EXECUTORS, Progress, Resources
from hybridsim.coordinator.simulation import stored_attributes


@dataclass(frozen=True)
class Row:
    """One run's line of the campaign table: how it ended (``made``, ``resumed`` or ``found``), wall time (s)."""

    run: Run
    status: str
    how: str
    wall_s: float
    output: str
    summary: dict[str, Any] = field(default_factory=dict)


def subject_of(subject: str | Path | Subject) -> Subject:
    """``subject`` itself, or the experiment file a path names."""
    return ExperimentFile(Path(subject)) if isinstance(subject, (str, Path)) else subject


def run_one(subject: str | Path | Subject, run: Run, out_dir: str) -> Row:
    """Make, resume or find the run's results file ``out_dir/<run id>.h5`` (made afresh when a file left by a
    run that died cannot be resumed or read; a file a live run holds is refused, never made twice).  A run
    a module stops (a limit, a refusal) is a row whose status says why, not the end of the campaign."""
    subject = subject_of(subject)
    path = Path(out_dir) / f"{run.run_id}.h5"
    start = time.perf_counter()
    how = "made"  # or "resumed" from the moment a resume starts: the row of a run that stops then says so
    try:
        if path.exists():
            attrs = _attributes(path)
            if attrs.get("status") == "completed":
                return Row(run, "completed", "found", 0.0, str(path), json.loads(attrs.get("summary", "{}")))
            how = "resumed"
            summary = subject.resume(path)
            if summary is not None:
                return _row(run, how, start, path, summary)
        how = "made"
        return _row(run, how, start, path, subject.make(run, path))
    except RunStopped as exc:  # a module refused or failed a step: this run's row says so, the campaign goes on
        return _row(run, how, start, path, {"stop_reason": str(exc)})


def _row(run: Run, how: str, start: float, path: Path, summary: Mapping[str, Any]) -> Row:
    """The row of a run that ended (its file's status: completed, or stopped and why)."""
    status = str(_attributes(path).get("status", "stopped"))
    return Row(run, status, how, time.perf_counter() - start, str(path), dict(summary))


def _attributes(path: Path) -> dict[str, Any]:
    """A results file's attributes, or none when a run that died left it unreadable (or none at all)."""
    try:
        return stored_attributes(path)
    except UsageError:
        return {}


def run_campaign(subject: str | Path | Subject, runs: list[Run], out_dir: str | Path, executor: str = "serial",
                 resources: Resources = Resources(), progress: Progress = None) -> list[Row]:
    """Every run of the campaign on ``executor`` (a name of EXECUTORS), the rows in the runs' order; a process
    pool's workers started as the subject says (its ``start_method``)."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    subject = subject_of(subject)
    jobs = [(subject, run, str(out_dir)) for run in runs]
    return EXECUTORS[executor](run_one, jobs, replace(resources, start_method=subject.start_method), progress)
