"""`hybridsim campaign-report TABLE`: IDA curves per record, the tornado and the figures from a campaign table."""

import json

import numpy as np
import pytest

from hybridsim.coordinator.campaign.grid import Run
from hybridsim.coordinator.campaign.runner import Row
from hybridsim.coordinator.campaign.table import write_table
from hybridsim.coordinator.cli import main

SCALES = [0.2, 0.4, 0.8]
RECORDS = {"a.csv": 0.01, "b.csv": 0.02}  # a table made by hand: peak = factor * scale**1.5 + damping_ratio


def _table(tmp_path):
    rows = [Row(Run((("ground_motion.scale", s), ("ground_motion.file", r), ("structure.zeta", z)), 0), "completed",
                "made", 1.0, "x.h5", {"peak_displacement": {"x": f * s**1.5 + z}, "evaluation": {"J2": 10 * s}})
            for s in SCALES for r, f in RECORDS.items() for z in (0.0, 0.001)]
    return write_table(rows, tmp_path / "campaign.h5")


def test_ida_curves_tornado_and_figures(tmp_path, capsys):
    table = _table(tmp_path)
    assert main(["campaign-report", str(table), "--limit", "0.01", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    im, peaks = report["ida"]["b.csv"]
    assert im == sorted(SCALES * 2) and np.allclose(peaks[::2], [0.02 * s**1.5 for s in SCALES])
    # main effects: scale (0.2 -> 0.8) swings mean(f) * (0.8**1.5 - 0.2**1.5) = 0.015 * 0.626, zeta 0.001
    (first, low, high), (second, *_) = report["tornado"]
    assert (first, second) == ("ground_motion.scale", "structure.zeta")
    assert np.isclose(high - low, 0.015 * (0.8**1.5 - 0.2**1.5))
    assert report["j"]["J2"] == pytest.approx([10 * s for s in SCALES for _ in range(4)])
    assert sorted(p.rsplit("/", 1)[1] for p in report["figures"]) == ["fragility.png", "ida.png", "j.png",
                                                                        "tornado.png"]


@pytest.mark.parametrize("args, words", [
    (["--response", "peak_displacement.y"], "no column 'peak_displacement.y'"),
    (["--limit", "-1"], "--limit"),
    (["--intensity", "ground_motion.pga"], "no column 'ground_motion.pga'"),
])
def test_bad_options_are_one_line(tmp_path, capsys, args, words):
    assert main(["campaign-report", str(_table(tmp_path)), *args]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_a_file_that_is_not_a_table_is_one_line(tmp_path, capsys):
    (tmp_path / "x.h5").write_text("not hdf5")
    assert main(["campaign-report", str(tmp_path / "x.h5")]) == 2
    assert "not a campaign table" in capsys.readouterr().err
