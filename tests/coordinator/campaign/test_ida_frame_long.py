"""The IDA of the yielding frame, 5 records x 6 scales (`python benchmarks/campaign_ida_frame.py OUT` prints and
plots it; about 130 s on two workers at load 5.6), against the oracles of :mod:`.frame_oracle`: below yield each
curve is the straight line of the linear frame (OpenSees' AlphaOS on the whole frame, its members elastic), past
yield it leaves that line."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.coordinator.campaign.frame_oracle import drift, first_period, ground, sa

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "campaign_ida_frame.py"
RECORDS = ["hybridsim:marths/ground_motion_elcentro.csv", "hybridsim:marths/ground_motion_kobe.csv",
           "hybridsim:marths/ground_motion_morgan.csv", "kanai_tajimi_firm.csv", "kanai_tajimi_soft.csv"]
SMALLEST, DURATION = 0.1, 20.0  # examples/ida_frame: ida.toml's first scale, frame.toml's duration
TINY = 1e-3  # of the smallest scale: a drift of about 2e-6, far below the first yield (Kobe yields between 4e-3 and 1e-2)


@pytest.mark.long
def test_the_frame_ida_is_the_linear_frame_below_yield_and_leaves_it_past_yield(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "--json"], capture_output=True, text=True,
                          timeout=1800, check=True)
    result = json.loads(done.stdout)
    assert result["runs"] == 30 and len(result["ida"]) == 5
    period = first_period()
    for record in RECORDS:
        intensity, response = next(v for k, v in result["ida"].items() if k.endswith(record.split("/")[-1]))
        acceleration = ground(record, SMALLEST, DURATION)
        assert intensity[0] == pytest.approx(sa(acceleration, period), rel=1e-6)
        assert response[0] == pytest.approx(drift(acceleration), rel=1e-6)  # the same fibre model, monolithic
        slope = drift(TINY * acceleration) / (TINY * intensity[0])  # the linear frame's drift per g of Sa(T1)
        assert response[0] / intensity[0] == pytest.approx(slope, rel=1e-6)
        assert response[1] / intensity[1] == pytest.approx(slope, rel=1e-3)  # still on it (Kobe's first fibres yield)
        # 1 %: members elastic, closed-form A and I, against the fibre sections' (T1 0.9247 against 0.9260 s)
        assert drift(acceleration, elastic=True) / intensity[0] == pytest.approx(slope, rel=1e-2)
        assert abs(response[-1] / intensity[-1] / slope - 1) > 0.1  # past yield: off the straight line
    f = result["fragility"]
    assert f["method"] == "records at the limit" and f["theta_band"][0] <= f["theta"] <= f["theta_band"][1]
    assert 0 < f["beta"] < 1
    assert {Path(p).name for p in result["figures"]} >= {"ida.png", "fragility.png"}
