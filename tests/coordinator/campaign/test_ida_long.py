"""An IDA of the yielding oscillator over the three shipped records x 6 scales (`python benchmarks/campaign_ida.py OUT`
prints and plots it; about 20 s on two workers)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "campaign_ida.py"
YIELD = 0.02  # m: examples/spring_yielding.toml


@pytest.mark.long
def test_ida_is_linear_below_yield_and_gives_a_fragility(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "--json"], capture_output=True, text=True,
                          timeout=600, check=True)
    result = json.loads(done.stdout)
    assert result["runs"] == 18 and len(result["ida"]) == 3
    elastic = 0
    for scales, peaks in result["ida"].values():
        assert scales == sorted(scales) and len(scales) == 6
        if peaks[1] < YIELD:  # both of the two smallest scales elastic: the response is linear in the scale
            assert peaks[1] / peaks[0] == pytest.approx(scales[1] / scales[0], rel=1e-9)
            elastic += 1
        assert np.all(np.diff(peaks) > 0)
    assert elastic >= 1
    f = result["fragility"]
    assert f["theta_band"][0] <= f["theta"] <= f["theta_band"][1] and 0 < f["beta"] < 2
    assert {Path(p).name for p in result["figures"]} >= {"ida.png", "fragility.png"}
