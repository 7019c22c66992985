"""What a campaign runs (a subject): one :class:`~hybridsim.coordinator.campaign.grid.Run` into one results file.

The file's root attributes say ``status`` (``completed``, or why the run stopped) and ``summary`` (JSON: the
figures the campaign table reads, :mod:`hybridsim.coordinator.campaign.table`); the runner
(:mod:`hybridsim.coordinator.campaign.runner`) finds it, resumes it or has it made.  A subject is shipped to
the executors' workers, so it is a plain picklable value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import h5py
import numpy as np

from hybridsim.coordinator.campaign.grid import Run


class Subject(Protocol):
    """An experiment file (:mod:`.experiment`) or a problem's runs (:data:`SUBJECTS`)."""

    start_method: str
    """how a process pool's workers start (multiprocessing): ``spawn``, or ``fork`` to inherit this process's
    imports when a run starts no child process of its own"""

    def check(self, runs: Sequence[Run]) -> None:
        """Refuse a run's bad value before the first run starts (UsageError, one line naming it)."""

    def make(self, run: Run, path: Path) -> dict[str, Any]:
        """Make ``run`` into its results file ``path`` (replaced); its summary.  RunStopped: a module stopped it."""

    def resume(self, path: Path) -> dict[str, Any] | None:
        """The summary of the interrupted run of ``path`` resumed from its checkpoint; None: it is made afresh."""


def write_outcome(path: Path, summary: Mapping[str, Any], arrays: Mapping[str, np.ndarray] | None = None) -> dict:
    """A problem's completed run as a results file: its arrays as datasets, ``summary`` (JSON) and ``status``
    written last (a file its run died writing is not ``completed``, so it is made again); the summary."""
    path.parent.mkdir(parents=True, exist_ok=True)  # a Dask worker on another machine may not have the folder
    with h5py.File(path, "w") as f:
        for name, values in (arrays or {}).items():
            f[name] = values
        f.attrs["summary"] = json.dumps(summary)
        f.attrs["status"] = "completed"
    return dict(summary)
