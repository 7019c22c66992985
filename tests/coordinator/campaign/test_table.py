"""The campaign table of a shipped experiment: varied values, status and peaks, one row per run."""

from pathlib import Path

import numpy as np

from hybridsim.coordinator.campaign.grid import expand
from hybridsim.coordinator.campaign.runner import run_campaign
from hybridsim.coordinator.campaign.table import read_table, write_table

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sdof.toml"


def test_table_of_two_scales(tmp_path):
    rows = run_campaign(EXAMPLE, expand({"ground_motion.scale": [0.2, 0.6]}), tmp_path / "runs")
    table = read_table(write_table(rows, tmp_path / "campaign.h5"))
    assert list(table["ground_motion.scale"]) == [0.2, 0.6]
    assert list(table["status"]) == ["completed"] * 2 and list(table["how"]) == ["made"] * 2
    assert list(table["late_steps"]) == [0, 0]
    # a linear structure from rest: its peak is linear in the record's scale (0.6 / 0.2 = 3)
    peaks = table["peak_displacement.x"]
    assert np.isclose(peaks[1] / peaks[0], 3.0, rtol=1e-9)
    assert all(Path(p).is_file() for p in table["output"])
