"""A resumed run's indicators continue from its checkpoint, they do not begin again: the lagging SDOF of
test_hold.py, its lag partly compensated, run whole in one process, and run with its site on a daemon, the
coordinator killed at its first checkpoint (step 20) and resumed: the indicator rows are the uninterrupted run's,
bit for bit (the energy integrals, the tracking indicator's area, the delay estimator, the rules that acted)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.simulation import resume_run, run_experiment
from tests.coordinator.integrity.test_hold import SAMPLE, TAU, lagging_sdof
from tests.coordinator.test_resume_after_coordinator_crash import resumed_equals_uninterrupted

SITE = "integrity/modules/column"
DATASETS = ("integrity/balance", "integrity/energy_error", f"{SITE}/energy_error", f"{SITE}/tracking",
            f"{SITE}/delay")
COMPENSATED = 0.6
"""the share of the lag TAU the polynomial compensator extrapolates by: the interface keeps 0.4 TAU = 3.0 ms"""
THETA = 1.0
"""E_err / E_in of the warning, passed after the first checkpoint"""


def _table(tmp_path: Path, duration: float, name: str) -> dict[str, Any]:
    compensator = {"kind": "polynomial", "order": 2, "delay": COMPENSATED * TAU, "sample_period": SAMPLE}
    return lagging_sdof(tmp_path, name, compensator, {"energy_error": THETA, "action": "warn"},
                        checkpoint_every=20, duration=duration).table


def test_a_resumed_runs_indicators_continue_from_its_checkpoint(tmp_path: Path) -> None:
    """1.5 s (300 steps): the balance, the energy errors and TI continue; the warning's crossing is after step 20."""
    reference = resumed_equals_uninterrupted(tmp_path, partial(_table, tmp_path, 1.5), DATASETS)
    crossed = int(np.argmax(reference[f"{SITE}/energy_error"] > THETA))
    assert 20 < crossed and reference["integrity/balance"][20, 0] > 0.0 and reference[f"{SITE}/tracking"][-1, 0] > 0


@pytest.mark.long
def test_a_resumed_runs_delay_estimate_continues(tmp_path: Path) -> None:
    """6 s (1200 steps: the delay estimate's memory of 1000 steps passes): its rows too. The residual lag it finds
    is the uncompensated 0.4 TAU to first order in w tau (0.17): within 15 % (measured 2.894 ms against 3.004 ms).
    python -m pytest -m long -s tests/coordinator/integrity/test_resume.py prints it."""
    reference = resumed_equals_uninterrupted(tmp_path, partial(_table, tmp_path, 6.0), DATASETS)
    delay = reference[f"{SITE}/delay"][:, 0]
    print(f"delay estimate {1e3 * delay[-1]:.3f} ms against {1e3 * (1 - COMPENSATED) * TAU:.3f} ms")
    assert abs(delay[-1] - (1 - COMPENSATED) * TAU) < 0.15 * (1 - COMPENSATED) * TAU


def test_a_file_written_before_the_indicators_were_kept_is_refused_in_one_line(tmp_path: Path) -> None:
    """A stopped run with a checkpoint, its indicator datasets deleted as a file of an earlier version lacks them:
    its resume is refused in one line naming the dataset (not a KeyError from deep inside)."""
    with pytest.raises(RunStopped):
        run_experiment(lagging_sdof(tmp_path, "old", {"kind": "none"}, {"energy_error": 2.0, "action": "stop"},
                                    checkpoint_every=50))
    with h5py.File(tmp_path / "old.h5", "r+") as f:
        del f["integrity"]
    with pytest.raises(UsageError, match=r"has no /integrity/balance: it was written before") as refused:
        resume_run(tmp_path / "old.h5")
    assert "\n" not in str(refused.value)
