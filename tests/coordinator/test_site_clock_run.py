"""A coordinator run with a site on its own clock: its counters in the summary, the run's line, the report, the
results file's records (the site in process; its clock in a thread of the coordinator's process)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import h5py

from hybridsim.coordinator.cli.run import format_summary
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.monitor.report import report_html
from hybridsim.coordinator.simulation import run_experiment

SETUPS = Path(__file__).resolve().parents[2] / "examples" / "setups"


def test_the_run_reports_the_site_clock(tmp_path: Path) -> None:
    """examples/setups/one_actuator.toml, 0.4 s (80 steps of 5 ms, five 1 kHz samples each), the site on its
    own clock with the predictor-corrector."""
    site = tomllib.loads((SETUPS / "one_actuator_site.toml").read_text())
    site.update(clock="own", command_generation={"scheme": "predictor-corrector", "order": 2})
    table = tomllib.loads((SETUPS / "one_actuator.toml").read_text())
    table["experiment"]["duration"] = 0.4
    table["modules"][0] = {"name": "column", "kind": "experimental", "config": site}
    table["output"]["file"] = str(tmp_path / "run.h5")
    result = run_experiment(parse_experiment(table, base_dir=SETUPS))
    stats = result.summary["modules"]["column"]
    assert stats["clock_steps"] == 80 and stats["clock_samples"] >= 400
    assert stats["clock_target_step_s"] == 0.005
    line = next(line for line in format_summary({**result.summary, "output": "run.h5"}).splitlines()
                if line.startswith("site column on its own clock: "))
    assert "slowed steps" in line and "held samples" in line and "lateness p50" in line
    assert "site column&#x27;s own clock" in report_html(tmp_path / "run.h5")
    with h5py.File(tmp_path / "run.h5") as f:
        steps = f["modules/column/records/clock/steps"][()]
        assert steps.shape == (80, 5) and steps[-1, 0] == stats["clock_samples"]
