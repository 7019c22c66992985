"""The maRTHS trials and the calibration's fits as `hybridsim campaign` files: rows, resumption, report, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.campaign.report import study
from hybridsim.coordinator.campaign.table import read_table
from hybridsim.coordinator.cli import main
from hybridsim.coordinator.problems.marths import campaign, loop

TRIALS = ('problem = "marths"\ntrials = 2\n[campaign.grid]\nplant = ["uncertain"]\nduration = [6.0]\n'
          'scale = [0.2, 0.4]\n')


def _study(folder: Path, text: str) -> Path:
    path = folder / "study.toml"
    path.write_text("[campaign]\n" + text)
    return path


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


def test_trials_are_rows_found_again_and_reported(capsys, tmp_path: Path) -> None:
    path = _study(tmp_path, TRIALS)
    assert main(["campaign", str(path), "--json"]) == 0
    assert [r["how"] for r in _json(capsys)["runs"]] == ["made"] * 4
    assert main(["campaign", str(path), "--json"]) == 0
    assert [r["how"] for r in _json(capsys)["runs"]] == ["found"] * 4
    table = read_table(tmp_path / "study" / "campaign.h5")
    assert table["scale"].tolist() == [0.2, 0.2, 0.4, 0.4] and table["seed"].tolist() == [0, 1, 0, 1]
    # seed 1 is the benchmark's first uncertain plant (plant seed 1001, noise seed 2001), run here by the loop itself
    spec = loop.RunSpec(plant="uncertain", plant_seed=1001, noise_seed=2001, duration=6.0, scale=0.4)
    direct = campaign.run_one(spec, keep_history=False).criteria
    assert [table[f"evaluation.J.J2.{i}"][3] for i in range(2)] == direct["J2"]
    assert [table[f"evaluation.J.J7.{i}"][3] for i in range(2)] == direct["J7"]
    # a linear frame: the peak drift of the first floor doubles with the record's scale, to within the tracking
    # error of the actuators (J2 about 3 %) and the sensor noise
    np.testing.assert_allclose(table["peak_displacement.U27"][2:] / table["peak_displacement.U27"][:2], 2.0, rtol=0.03)
    report = study(table)  # what `hybridsim campaign-report` plots: the intensity is the scale
    assert report["j"]["J.J2.0"] == table["evaluation.J.J2.0"].tolist()
    assert report["ida"]["all runs"][0] == [0.2, 0.2, 0.4, 0.4]
    # a trial's file keeps no excitation or structure to measure Sa or a drift in: one line, exit 2
    for options in (["--sa-period", "T1"], ["--sa-period", "0.5"], ["--drift", "U27", "--storey-height", "3"]):
        assert main(["campaign-report", str(tmp_path / "study" / "campaign.h5"), *options]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"{options[0]}: " in err and "not an experiment's results" in err, err


def test_a_drawn_plant_gain_reaches_its_trial(capsys, tmp_path: Path) -> None:
    path = _study(tmp_path, 'problem = "marths"\nseed = 4\n[campaign.grid]\nduration = [6.0]\n'
                            '[campaign.random.plant_gain]\ndistribution = "uniform"\nlow = 0.8\nhigh = 1.2\n')
    assert main(["campaign", str(path), "--json"]) == 0
    table = read_table(Path(_json(capsys)["table"]))
    gain = float(table["plant_gain"][0])
    assert 0.8 < gain < 1.2 and gain != 1.0
    direct = campaign.run_one(loop.RunSpec(duration=6.0, plant_gain=gain), keep_history=False).criteria
    assert [table[f"evaluation.J.J2.{i}"][0] for i in range(2)] == direct["J2"]


def test_a_calibration_fit_as_a_campaign_row(capsys, tmp_path: Path) -> None:
    """Nominal El Centro x 0.4: theta0 of actuator 1 is the spec's (SPEC §16.2: 7.51, 2.53, -2.07, -7.05)."""
    path = _study(tmp_path, 'problem = "marths-calibration"\n[campaign.grid]\nrecord = ["elcentro"]\nscale = [0.4]\n')
    assert main(["campaign", str(path), "--json"]) == 0
    table = read_table(Path(_json(capsys)["table"]))
    theta = [table[f"evaluation.theta0.0.{tap}"][0] for tap in range(4)]
    np.testing.assert_allclose(theta, [7.51, 2.53, -2.07, -7.05], atol=0.006)


@pytest.mark.parametrize(("text", "message"), [
    ('problem = "marths"\n[campaign.grid]\nscal = [0.4]\n', "campaign.grid.scal: not a setting of a maRTHS run"),
    ('problem = "marths"\ntrials = 2\n', "the seeds after 0 are the benchmark's uncertain plants"),
    ('problem = "marths"\n[campaign.grid]\ntopology = ["cloud"]\n', "campaign.grid.topology: one of"),
    ('problem = "marths"\ntrials = 2\n[campaign.grid]\nplant = ["uncertain"]\nplant_seed = [1001]\n', "not both"),
    ('problem = "marths"\n[campaign.grid]\nscale = [-1.0]\n', "scale must be a positive factor"),
    ('problem = "marths"\n[campaign.grid]\nduration = ["6"]\n', "campaign.grid.duration: a number (s), not '6'"),
    ('problem = "marths"\n[campaign.grid]\nduration = [0.0]\n', "duration must be a positive time (s)"),
    ('problem = "marths"\n[campaign.grid]\nplant_gain = [0.0]\n', "plant_gain must be a positive factor"),
    ('problem = "marths"\n[campaign.grid]\nnoise = [1]\n', "campaign.grid.noise: true or false, not 1"),
    ('problem = "marths"\n[campaign.grid]\nplant_seed = [1.5]\n', "campaign.grid.plant_seed: a whole number"),
    ('problem = "marths"\n[campaign.grid]\npartition = ["halves"]\n', "partition must be one of"),
    ('problem = "marths"\nexperiment = "x.toml"\n', "exactly one of"),
    ('problem = "opensees"\n', "problem must be one of"),
    ('problem = "marths"\n[campaign.records]\nfiles = ["a.AT2"]\n', "a problem names its records in [campaign.grid]"),
    ('problem = "marths-calibration"\n[campaign.grid]\nrecord = ["kobe"]\nscale = [0.5]\n', "SPEC §16"),
    ('problem = "marths-calibration"\n[campaign.grid]\nrecord = ["kobe"]\nscale = [0.4]\ncompensator = ["none"]\n',
     "compensator is not a setting of a calibration run"),
    ('problem = "marths-calibration"\n[campaign.grid]\nrecord = ["kobe"]\nscale = [0.4]\n[campaign.random.plant_gain]\n'
     'distribution = "uniform"\nlow = 0.9\nhigh = 1.1\n', "plant_gain is not a setting of a calibration run"),
    ('problem = "marths"\n[campaign.random.bogus]\ndistribution = "uniform"\nlow = 0.9\nhigh = 1.1\n',
     "campaign.random.bogus: not a setting of a maRTHS run"),
])
def test_a_bad_problem_campaign_is_one_line_exit_2(capsys, tmp_path: Path, text: str, message: str) -> None:
    assert main(["campaign", str(_study(tmp_path, text))]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
