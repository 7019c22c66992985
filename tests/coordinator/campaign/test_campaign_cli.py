"""`hybridsim campaign FILE`: seeded draws applied, records for IDA, a restarted campaign runs each run once."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from hybridsim.coordinator.campaign.config import load
from hybridsim.coordinator.campaign.draws import with_draws
from hybridsim.coordinator.campaign.grid import apply, expand
from hybridsim.coordinator.cli import main
from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder.read import read_results
from hybridsim.coordinator.simulation import run_experiment

SDOF = Path(__file__).resolve().parents[3] / "examples" / "sdof.toml"
LOGNORMAL = {"distribution": "lognormal", "median": 0.4, "beta": 0.3}
# a yielding spring (its state matters on resume) under El Centro (quiet for its first 5 s): 800 steps,
# a checkpoint every 200
YIELDING = """[experiment]
name = "spring"
dt = 0.01
duration = 8.0
[structure]
dofs = ["x"]
mass_diagonal = [1000.0]
influence = [1.0]
damping = { rayleigh = [0.3, 1e-4] }
[ground_motion]
file = "hybridsim:marths/ground_motion_elcentro.csv"
scale = 0.6
[[modules]]
name = "column"
kind = "spring"
config = { dofs = ["x"], law = "bilinear", stiffness = 4.0e5, yield_displacement = 0.004, hardening_ratio = 0.05 }
[output]
checkpoint_every = 200
"""


def _campaign(tmp_path, text: str, experiment: Path = SDOF) -> Path:
    path = tmp_path / "study.toml"
    path.write_text(f'[campaign]\nexperiment = "{experiment}"\n{text}')
    return path


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_the_same_seed_draws_the_same_values_and_another_seed_others():
    runs = expand({"ground_motion.scale": [0.2, 0.8]}, trials=3)
    first, again, other = (with_draws(runs, {"ground_motion.scale": LOGNORMAL}, seed) for seed in (7, 7, 8))
    assert [r.drawn for r in first] == [r.drawn for r in again]
    assert all(a.drawn != b.drawn for a, b in zip(first, other))
    assert first[0].drawn == first[3].drawn  # seed 0 draws the same at every grid point
    assert first[0].drawn != first[1].drawn


def test_lognormal_draws_have_the_declared_median_and_beta():
    runs = with_draws(expand({}, trials=4000), {"k": LOGNORMAL})
    logs = np.log([r.drawn[0][1] for r in runs])
    # ln X ~ N(ln 0.4, 0.3): mean within 4 standard errors, std within 4 of its standard error (0.3 / sqrt(2n))
    assert abs(logs.mean() - np.log(0.4)) < 4 * 0.3 / np.sqrt(4000)
    assert abs(logs.std() - 0.3) < 4 * 0.3 / np.sqrt(2 * 4000)
    assert stats.kstest(logs, stats.norm(np.log(0.4), 0.3).cdf).pvalue > 1e-3


def test_drawn_scales_reach_the_runs(tmp_path, capsys):
    study = _campaign(tmp_path, 'trials = 3\nseed = 5\n[campaign.grid]\n"experiment.duration" = [4.0]\n'
                      '[campaign.random."ground_motion.scale"]\ndistribution = "uniform"\nlow = 0.2\nhigh = 0.6\n')
    assert main(["campaign", str(study), "--out", str(tmp_path / "out"), "--json"]) == 0
    runs = _json(capsys)["runs"]
    scales = np.array([r["drawn"]["ground_motion.scale"] for r in runs])
    peaks = np.array([np.abs(read_results(r["output"])["displacement"]).max() for r in runs])
    assert len(set(scales)) == 3 and np.all((0.2 <= scales) & (scales <= 0.6))
    # a linear structure from rest: the peak is proportional to the record's scale
    assert np.allclose(peaks / scales, peaks[0] / scales[0], rtol=1e-9)


def test_records_are_one_more_grid_key(tmp_path):
    records = '["hybridsim:marths/ground_motion_elcentro.csv", "hybridsim:marths/ground_motion_kobe.csv"]'
    study = _campaign(tmp_path, f'[campaign.grid]\n"ground_motion.scale" = [0.1, 0.2, 0.4]\n'
                      f'[campaign.records]\nfiles = {records}\n')
    runs = load(study).runs
    assert len(runs) == 6
    assert {dict(r.values)["ground_motion.file"] for r in runs} == set(json.loads(records))


def _interrupt(experiment: Path, run, out: Path, step: int) -> None:
    """Run ``run`` of the campaign into its file and abort it at ``step`` (a coordinator lost mid-run)."""
    import tomllib
    config = apply(tomllib.loads(experiment.read_text()), run)
    control = RunControl()

    def listener(n, _arrays):
        if n == step:
            control.abort("coordinator lost")

    out.mkdir()
    with pytest.raises(RunStopped):
        run_experiment(parse_experiment(config, base_dir=experiment.parent), output=out / f"{run.run_id}.h5",
                       control=control, listeners=[listener])


def test_a_campaign_started_again_resumes_the_interrupted_run_and_finds_the_complete_ones(tmp_path, capsys):
    experiment = tmp_path / "spring.toml"
    experiment.write_text(YIELDING)
    study = _campaign(tmp_path, '[campaign.grid]\n"ground_motion.scale" = [0.3, 0.6]\n', experiment)
    broken, whole = tmp_path / "broken", tmp_path / "whole"
    _interrupt(experiment, load(study).runs[1], broken, 650)
    assert read_results(broken / "ground_motion.scale=0.6_seed=0.h5")["attrs"]["status"] != "completed"
    assert main(["campaign", str(study), "--out", str(broken), "--json"]) == 0
    resumed = _json(capsys)["runs"]
    assert [r["how"] for r in resumed] == ["made", "resumed"]
    assert main(["campaign", str(study), "--out", str(whole), "--json"]) == 0
    for a, b in zip(resumed, _json(capsys)["runs"]):
        x, y = read_results(a["output"])["displacement"], read_results(b["output"])["displacement"]
        assert np.max(np.abs(x - y)) <= 1e-12 * np.max(np.abs(y))
    assert np.max(np.abs(y)) > 0.004  # the spring yielded: its restored state mattered
    assert main(["campaign", str(study), "--out", str(broken), "--json"]) == 0
    assert [r["how"] for r in _json(capsys)["runs"]] == ["found", "found"]


@pytest.mark.parametrize("text, words", [
    ("trails = 2\n", "unknown key campaign.trails"),
    ("trials = 0\n", "campaign.trials"),
    ('[campaign.grid]\n"ground_motion.scale" = 0.4\n', "non-empty list"),
    ('[campaign.grid]\n"nowhere.scale" = [1.0]\n', r"no table \[nowhere\]"),
    ('[campaign.random."ground_motion.scale"]\ndistribution = "normal"\nmedian = 1.0\n', "takes mean and std"),
    ('[campaign.random."ground_motion.scale"]\ndistribution = "gamma"\n', "distribution must be one of"),
    ('[campaign.records]\nfolder = "."\npattern = "*.AT2"\n', "no file matches"),
    ('[campaign.grid]\n"ground_motion.scale" = ["big"]\n', "ground_motion.scale must be"),
])
def test_bad_campaign_is_one_line_exit_2(tmp_path, capsys, text, words):
    assert main(["campaign", str(_campaign(tmp_path, text)), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(words, err), err
    assert not (tmp_path / "out").exists()
