"""An experiment file as a campaign's subject: every run an ordinary run of it, resumable from its checkpoints.

A run's values (dotted keys) and draws are written into the experiment's configuration
(:func:`hybridsim.coordinator.campaign.grid.apply`); its results file is the run's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridsim.coordinator.campaign.grid import Run, apply
from hybridsim.coordinator.config_text import parse_config_text, read_config_text
from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.experiment import ExperimentError, parse_experiment
from hybridsim.coordinator.recorder import read_checkpoint
from hybridsim.coordinator.simulation import UNREADABLE, resume_run, run_experiment


@dataclass(frozen=True)
class ExperimentFile:
    """The experiment file at ``path`` (TOML)."""

    path: Path
    start_method = "spawn"
    """a forked worker would inherit the results writer's fork server of a run made earlier in this process,
    which it cannot wait for (ChildProcessError)"""

    def _parsed(self, run: Run) -> Any:
        source = read_config_text(self.path)
        table = apply(parse_config_text(source, "TOML"), run)
        return parse_experiment(table, base_dir=self.path.resolve().parent, source=source)

    def check(self, runs: Sequence[Run]) -> None:
        """Parse every run's experiment (no module is started)."""
        try:
            source = read_config_text(self.path)
            config = parse_config_text(source, "TOML")
        except OSError as exc:
            raise UsageError(f"campaign.experiment: cannot read {self.path} ({exc.strerror})") from None
        except ValueError as exc:
            raise UsageError(f"{self.path}: {exc}") from None
        for run in runs:
            try:
                parse_experiment(apply(config, run), base_dir=self.path.parent, source=source)
            except ExperimentError as exc:
                raise UsageError(f"campaign run {run.run_id}: {exc}") from None

    def make(self, run: Run, path: Path) -> dict[str, Any]:
        """The run made afresh into ``path``."""
        return run_experiment(self._parsed(run), output=path, overwrite=True).summary

    def resume(self, path: Path) -> dict[str, Any] | None:
        """The run resumed from the file's last checkpoint; None when it has none (or cannot be read)."""
        try:
            if read_checkpoint(path) is None:
                return None
        except UNREADABLE:
            return None
        return resume_run(path).summary
