"""A site on its own clock streams its clock's records (clock/samples, clock/steps) in blocks, as its per-sample
record, and keeps none when no record is asked (``output.records = false``): a long run holds a bounded log.

examples/setups/one_actuator.toml for 3 s (600 steps of 5 ms, five 1 kHz control samples each; the clock
runs on the wall clock, so about 3 s), the coordinator collecting the site's records every 64 steps (the
run's default is every 8192).  The oracles are the protocol of ``records(since)`` (docs/wire.md
``Records``), not the clock's code:

- through a site daemon: every row of both records reaches the results file exactly once (no unfilled
  row, the step ends increasing, one row per step and per sample up to the last step's end), the site's
  own record file holds the same rows, and the close counters the daemon folded from the rows it forgot
  are the counts of those rows (held samples, slowed steps, late samples, the largest lateness exactly;
  the percentiles within a bin of the histogram they come from: 0.1 % of (x + 0.01 us));
- in process: after collection j the clock holds samples from c_{j-1} on exactly (c_j: the committed
  sample at collection j), so it never holds more than two collections' samples;
- no record asked: nothing stored, and the clock folds its committed samples into its counters once it holds
  256 (the site's block, patched down from 65536); the counters still count every sample up to the last
  step's end.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

from hybridsim.coordinator import run_loop, simulation
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.experimental import module as experimental
from hybridsim.modules.experimental.clock import HELD, LATE_SHARE, SLOWED

SETUPS = Path(__file__).resolve().parents[2] / "examples" / "setups"
EVERY = 64
STEPS, SAMPLES_PER_STEP = 600, 5


def experiment(output: Path, daemon: bool, records: bool = True) -> Any:
    site = tomllib.loads((SETUPS / "one_actuator_site.toml").read_text())
    site.update(clock="own", command_generation={"scheme": "predictor-corrector", "order": 2})
    if daemon:
        site["record"] = "site.h5"  # inside the run's folder
    table = tomllib.loads((SETUPS / "one_actuator.toml").read_text())
    table["experiment"]["duration"] = STEPS * 0.005
    table["modules"][0] = {"name": "column", "kind": "experimental", "config": site,
                           **({"address": "local"} if daemon else {})}
    table["output"] = {"file": str(output), "records": records}
    return parse_experiment(table, base_dir=output.parent)


def clock_records(path: Path, prefix: str = "modules/column/records/") -> tuple[np.ndarray, np.ndarray]:
    with h5py.File(path) as f:
        return f[prefix + "clock/samples"][()], f[prefix + "clock/steps"][()]


def test_the_clock_records_stream_through_a_site_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_loop, "RECORDS_EVERY", EVERY)
    stats = run_experiment(experiment(tmp_path / "run.h5", daemon=True)).summary["modules"]["column"]
    samples, steps = clock_records(tmp_path / "run.h5")
    ends = steps[:, 0].astype(int)
    assert steps.shape == (STEPS, 5) and stats["clock_steps"] == STEPS
    assert np.all(np.diff(ends) >= SAMPLES_PER_STEP) and ends[0] >= SAMPLES_PER_STEP
    assert samples.shape == (ends[-1], 4) == (stats["clock_samples"], 4)  # samples 1 .. the last step's end
    assert not np.isnan(samples).any() and not np.isnan(steps).any()  # every row written, none skipped
    for own, stored in zip(clock_records(tmp_path / "site.h5", ""), (samples, steps)):
        np.testing.assert_array_equal(own, stored)
    # the counters the daemon folded from the rows it forgot are the counts of the rows stored
    modes, lateness = samples[:, 2], samples[:, 0]
    held = [np.count_nonzero(modes[a:b] == HELD) for a, b in zip(np.concatenate(([0], ends[:-1])), ends)]
    np.testing.assert_array_equal(steps[:, 2], held)
    assert stats["clock_held_samples"] == np.sum(held)
    assert stats["clock_slowed_steps"] == np.sum(steps[:, 3]) == len({np.searchsorted(ends, k, side="left")
                                                                      for k in np.flatnonzero(modes == SLOWED) + 1})
    assert stats["clock_late_samples"] == np.count_nonzero(lateness > LATE_SHARE * 1e3)  # dt = 1 ms = 1e3 us
    assert stats["clock_lateness_max_us"] == np.max(lateness)
    assert stats["clock_mean_step_s"] == pytest.approx(np.mean(steps[:, 4]), rel=1e-12)
    for q in (50, 99):
        exact = np.percentile(lateness, q)
        assert abs(stats[f"clock_lateness_p{q}_us"] - exact) <= 1e-3 * (exact + 0.01), q


class Held:
    """A step listener: the in-process site's clock log after each step (collections run before listeners)."""

    def __init__(self) -> None:
        self.modules: list = []
        self.collected: list[int] = []
        """the committed sample at each collection"""
        self.checked = 0

    def site(self) -> Any:
        return next(m for spec, m, _ in self.modules if spec.name == "column")

    def __call__(self, n: int, _window: Any) -> None:
        site = self.site()
        if n % EVERY:
            return
        self.collected.append(site._committed_sample)
        if len(self.collected) >= 2:  # collection j forgot the samples before c_{j-1}: rows from c_{j-1} - 1 on
            assert site.clock.sample_log.first == self.collected[-2] - 1
            assert site.clock.step_log.head()[0, 0] >= self.collected[-2]  # and the steps that ended before
            self.checked += 1


def started(monkeypatch: pytest.MonkeyPatch, held: Held) -> None:
    start_modules = simulation._start_modules

    def noted(*args: Any, **kwargs: Any) -> Any:
        held.modules = start_modules(*args, **kwargs)
        return held.modules

    monkeypatch.setattr(simulation, "_start_modules", noted)


def test_in_process_the_clock_holds_two_collections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_loop, "RECORDS_EVERY", EVERY)
    held = Held()
    started(monkeypatch, held)
    run_experiment(experiment(tmp_path / "run.h5", daemon=False), listeners=[held])
    assert held.checked == STEPS // EVERY - 1
    samples, steps = clock_records(tmp_path / "run.h5")
    assert steps.shape[0] == STEPS and not np.isnan(samples).any() and samples.shape[0] == steps[-1, 0]


def test_no_records_asked_the_clock_keeps_only_its_counters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(experimental, "RECORD_FILE_BLOCK", 256)
    held_after: list[int] = []
    held = Held()
    started(monkeypatch, held)

    def note(_n: int, _window: Any) -> None:
        site = held.site()
        held_after.append(site._committed_sample - site.clock.sample_log.first)  # committed samples held

    summary = run_experiment(experiment(tmp_path / "run.h5", daemon=False, records=False), listeners=[note]).summary
    stats = summary["modules"]["column"]
    assert stats["clock_steps"] == STEPS
    assert stats["clock_samples"] == held.site()._committed_sample >= STEPS * SAMPLES_PER_STEP
    folds = np.count_nonzero(np.diff(held_after) < 0)
    assert max(held_after) < 256 and folds >= stats["clock_samples"] // (256 + max(np.diff(held_after))) - 1
    with h5py.File(tmp_path / "run.h5") as f:  # only the compensator's parameters at the end (a whole record)
        assert list(f["modules/column/records"]) == ["compensator_1"]
