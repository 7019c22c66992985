"""A 2 x 2 slice of the yielding frame's IDA (examples/ida_frame/ida.toml: the two synthetic records at the two
smallest scales, 3 s of each) through `hybridsim campaign` and `hybridsim campaign-report`, against the oracles of
:mod:`.frame_oracle` (OpenSees' AlphaOS on the whole frame, its eigen solver, SciPy's lsim for Sa).
"""

import json
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.cli import main
from tests.coordinator.campaign.frame_oracle import FLOORS, FOLDER, REPORT, drift, first_period, ground, sa

RECORDS = ["kanai_tajimi_firm.csv", "kanai_tajimi_soft.csv"]
SCALES, DURATION = [0.1, 0.25], 3.0


def _slice(out: Path, experiment: str, records: list[str], scales: list[float], workers: int = 2) -> Path:
    """The folder of a slice of the IDA campaign of ``experiment`` on a pool of ``workers`` (1: in this process):
    its runs and its table."""
    study = out / "slice.toml"
    study.write_text(f'[campaign]\nexperiment = "{FOLDER / experiment}"\n[campaign.records]\n'
                     f'files = {json.dumps([str(FOLDER / r) for r in records])}\n[campaign.grid]\n'
                     f'"ground_motion.scale" = {scales}\n"experiment.duration" = [{DURATION}]\n')
    executor = ["--executor", "pool", "--workers", str(workers)] if workers > 1 else []
    assert main(["campaign", str(study), *executor, "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return _slice(tmp_path_factory.mktemp("ida"), "frame.toml", RECORDS, SCALES)


@pytest.fixture(scope="module")
def period():
    return first_period()


@pytest.fixture(scope="module")
def oracle(period):
    """(Sa(T1) g, the monolithic's peak drift ratio) of every record at every scale."""
    return {r: [(sa(ground(r, s, DURATION), period), drift(ground(r, s, DURATION))) for s in SCALES] for r in RECORDS}


def _report(table: Path, capsys, *args: str) -> dict:
    assert main(["campaign-report", str(table), *REPORT, "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_slice_gives_the_monolithic_drifts_at_sa_of_t1(report, oracle, period, capsys):
    result = _report(report / "campaign.h5", capsys)
    assert result["runs"] == 4 and result["intensity"] == "Sa(T1, 5 %) (g)"
    assert result["period_s"] == pytest.approx([period, period], rel=1e-9)  # the pre-test's T1, OpenSees' eigen
    for record in RECORDS:
        (intensity, response) = next(v for k, v in result["ida"].items() if k.endswith(record))
        assert intensity == pytest.approx([e[0] for e in oracle[record]], rel=1e-6)
        assert response == pytest.approx([e[1] for e in oracle[record]], rel=1e-6)
    assert {Path(p).name for p in result["figures"]} >= {"ida.png"}


def test_the_fragility_of_records_at_a_limit_between_their_runs(report, oracle, capsys):
    """A limit each record crosses between its two runs: theta and beta of the records' Sa at the limit
    (linear between the two runs), from the oracles' numbers."""
    limit = max(p[0][1] for p in oracle.values()) * 1.01
    assert all(p[0][1] < limit < p[1][1] for p in oracle.values())
    at = np.log([a[0] + (limit - a[1]) * (b[0] - a[0]) / (b[1] - a[1]) for a, b in oracle.values()])
    f = _report(report / "campaign.h5", capsys, "--limit", str(limit))["fragility"]
    assert f["method"] == "records at the limit"
    assert f["theta"] == pytest.approx(np.exp(at.mean()), rel=1e-6)
    assert f["beta"] == pytest.approx(np.std(at, ddof=1), rel=1e-5)


def test_the_frame_as_two_sites_gives_the_same_drift_below_yield(tmp_path, oracle, capsys):
    """frame_split.toml: storey 1 and storeys 2-3 as two OpenSees sites meeting at the floor-1 joints (their
    rotations and vertical displacements massless coordinator DOFs): the monolithic frame's drift, below yield."""
    folder = _slice(tmp_path, "frame_split.toml", RECORDS[1:], SCALES[:1], workers=1)
    capsys.readouterr()  # the campaign's own lines
    result = _report(folder / "campaign.h5", capsys)
    (intensity, response), = result["ida"].values()
    assert response == pytest.approx([oracle[RECORDS[1]][0][1]], rel=1e-6)


@pytest.mark.parametrize("args, words", [
    (["--drift", "floor9.x", "--storey-height", "3.5"], "no DOF 'floor9.x'"),
    (["--drift", *FLOORS], "--drift needs --storey-height"),
    (["--drift", *FLOORS, "--storey-height", "3.5", "3.5"], "one per --drift floor"),
    (["--sa-period", "fast"], "--sa-period"),
    (["--sa-period", "-1"], "--sa-period"),
])
def test_bad_measures_are_one_line(report, capsys, args, words):
    assert main(["campaign-report", str(report / "campaign.h5"), *args]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
