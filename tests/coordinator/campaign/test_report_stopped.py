"""A run a module stops is in the report: its response beyond every limit (the IDA curve's flatline, counted as
exceeding), its intensity from the whole record it was to run (not the steps before the stop)."""

from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.campaign.grid import expand
from hybridsim.coordinator.campaign.measures import Measures
from hybridsim.coordinator.campaign.report import study
from hybridsim.coordinator.campaign.runner import run_campaign
from hybridsim.coordinator.campaign.table import read_table, write_table

SDOF = Path(__file__).resolve().parents[3] / "examples" / "sdof.toml"


def test_a_stopped_run_exceeds_and_keeps_the_intensity_of_its_whole_record(tmp_path):
    """The linear SDOF behind a 45 mm limit (peak 22.6 mm at scale 0.2, four times that at 0.8): the 0.8 run is
    stopped mid-record.  Sa of a scaled record is the scale times Sa of the record (a linear oscillator from
    rest), so the stopped run's Sa is four times the completed run's."""
    experiment = tmp_path / "sdof.toml"
    experiment.write_text(SDOF.read_text().replace(
        'config = { dofs = ["x"], stiffness = [[39478.417604357434]] }',
        'config = { dofs = ["x"], stiffness = [[39478.417604357434]], limits = { displacement = 0.045 } }'))
    rows = run_campaign(experiment, expand({"ground_motion.scale": [0.2, 0.8]}), tmp_path)
    assert [r.status.split(":")[0] for r in rows] == ["completed", "stopped"]
    table = read_table(write_table(rows, tmp_path / "campaign.h5"))
    result = study(table, limit=0.03, measures=Measures(period=1.0), folder=tmp_path)
    (sa, peak), = result["ida"].values()
    assert result["stopped"] == 1 and peak[1] is None and peak[0] == pytest.approx(0.0226, abs=1e-4)
    assert sa[1] == pytest.approx(4 * sa[0], rel=1e-9)
    assert result["fragility"]["at_limit"] == [pytest.approx(sa[0], rel=1e-12)]  # flat from the last run on
    stripes = study(table, intensity="ground_motion.scale", limit=0.03)["fragility"]
    assert stripes["method"] == "stripes" and np.isnan(stripes["theta"])  # 0.2 passes, 0.8 exceeds: separated
