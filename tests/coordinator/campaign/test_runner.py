"""A campaign of a shipped experiment: each run an ordinary run; a pool gives the serial runs bit for bit."""

from pathlib import Path

import numpy as np

from hybridsim.coordinator.campaign.grid import expand
from hybridsim.coordinator.campaign.runner import run_campaign
from hybridsim.coordinator.problems.executors import Resources
from hybridsim.coordinator.recorder.read import read_results

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sdof.toml"
RUNS = expand({"ground_motion.scale": [0.2, 0.4, 0.8]})


def _displacements(rows):
    return [read_results(row.output)["displacement"] for row in rows]


def test_pool_equals_serial_bit_for_bit_and_a_second_pass_makes_nothing(tmp_path):
    serial = run_campaign(EXAMPLE, RUNS, tmp_path / "serial")  # first: its runs start a fork server here
    pool = run_campaign(EXAMPLE, RUNS, tmp_path / "pool", "pool", Resources(workers=2))
    assert [r.status for r in serial + pool] == ["completed"] * 6
    for a, b in zip(_displacements(serial), _displacements(pool)):
        assert np.array_equal(a, b)
    # a linear structure from rest: the response is linear in the record's scale (0.2 : 0.4 : 0.8)
    peaks = [np.abs(d).max() for d in _displacements(serial)]
    assert np.allclose([peaks[1] / peaks[0], peaks[2] / peaks[0]], [2.0, 4.0], rtol=1e-9)
    again = run_campaign(EXAMPLE, RUNS, tmp_path / "pool")
    assert [r.how for r in again] == ["found"] * 3
    assert [r.summary for r in again] == [r.summary for r in pool]


def test_a_run_a_module_stops_is_a_row_that_says_why_and_the_campaign_goes_on(tmp_path):
    """The linear SDOF's peak is 22.6 mm at scale 0.2 and four times that at 0.8 (linear from rest); behind a 45 mm
    displacement limit the 0.8 run is refused mid-record, the 0.2 run completes, in either order."""
    experiment = tmp_path / "sdof.toml"
    experiment.write_text(EXAMPLE.read_text().replace(
        'config = { dofs = ["x"], stiffness = [[39478.417604357434]] }',
        'config = { dofs = ["x"], stiffness = [[39478.417604357434]], limits = { displacement = 0.045 } }'))
    rows = run_campaign(experiment, expand({"ground_motion.scale": [0.8, 0.2]}), tmp_path / "out")
    assert rows[0].status.startswith("stopped: ") and "0.045" in rows[0].summary["stop_reason"]
    assert rows[1].status == "completed"
    assert np.abs(read_results(rows[1].output)["displacement"]).max() < 0.045
    kept = read_results(rows[0].output)["displacement"]
    assert 0 < len(kept) < len(read_results(rows[1].output)["displacement"])  # the steps before the stop are kept
    assert np.abs(kept).max() <= 0.045
