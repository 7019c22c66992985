"""A 2 x 2 slice of the yielding frame's IDA (examples/ida_frame/ida.toml: the two synthetic records at the two
smallest scales, 3 s of each) through `hybridsim campaign` and `hybridsim campaign-report`.

Oracles: the whole frame under OpenSees' own AlphaOS (the monolithic model: the drift of every run), the
frame's first period from OpenSees' eigen solver, and Sa from SciPy's lsim of the 5 %-damped oscillator under
the record read from its CSV file (not through hybridsim's reader).
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import signal

from hybridsim.coordinator.cli import main
from hybridsim.modules.opensees.monolithic import alpha_os_response

FOLDER = Path(__file__).resolve().parents[3] / "examples" / "ida_frame"
RECORDS = ["kanai_tajimi_firm.csv", "kanai_tajimi_soft.csv"]
SCALES, DURATION, DT, H, G = [0.1, 0.25], 3.0, 0.005, 3.5, 9.80665
FLOORS = ["floor1.x", "floor2.x", "floor3.x"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The slice's campaign (2 workers) and its report (Sa at T1, the drift, a limit between the runs)."""
    out = tmp_path_factory.mktemp("ida")
    study = out / "slice.toml"
    study.write_text(f'[campaign]\nexperiment = "{FOLDER / "frame.toml"}"\n[campaign.records]\n'
                     f'files = {json.dumps([str(FOLDER / r) for r in RECORDS])}\n[campaign.grid]\n'
                     f'"ground_motion.scale" = {SCALES}\n"experiment.duration" = [{DURATION}]\n')
    assert main(["campaign", str(study), "--executor", "pool", "--workers", "2", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def oracle():
    """(Sa g, drift) of every record at every scale from the oracles."""
    return {r: [_oracle(r, s) for s in SCALES] for r in RECORDS}


def _report(table: Path, capsys, *args: str) -> dict:
    assert main(["campaign-report", str(table), "--sa-period", "T1", "--drift", *FLOORS, "--storey-height", str(H),
                 "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def _frame():
    spec = importlib.util.spec_from_file_location("steel_frame", FOLDER / "steel_frame.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _oracle(record: str, scale: float) -> tuple[float, float]:
    """(Sa(T1, 5 %) g, the monolithic's peak drift ratio) of the record at the scale."""
    from hybridsim.modules.opensees import domain
    from hybridsim.modules.opensees.lazy import ops

    with domain.held("the frame's periods"):
        _frame().build(ops)
        period = 2 * np.pi / np.sqrt(ops.eigen("-fullGenLapack", 1)[0])
    data = np.loadtxt(FOLDER / record, delimiter=",", skiprows=1)[:int(round(DURATION / DT)) + 1]
    acc = scale * data[:, 1]
    omega = 2 * np.pi / period
    _, u, _ = signal.lsim(([-1.0], [1.0, 2 * 0.05 * omega, omega ** 2]), acc, data[:, 0])
    floors = alpha_os_response(FOLDER / "steel_frame.py", {}, dt=DT, ground_acceleration=acc, alpha=-0.05,
                               record=[(3, 1), (5, 1), (7, 1)], rayleigh=(0.2714, 0.0))
    drift = np.max(np.abs(np.diff(np.column_stack([np.zeros(len(floors)), floors]), axis=1))) / H
    return omega ** 2 * np.max(np.abs(u)) / G, drift


def test_the_slice_gives_the_monolithic_drifts_at_sa_of_t1(report, oracle, capsys):
    result = _report(report / "campaign.h5", capsys)
    assert result["runs"] == 4 and result["intensity"] == "Sa(T1, 5 %) (g)"
    for record in RECORDS:
        (sa, drift) = next(v for k, v in result["ida"].items() if k.endswith(record))
        expected = oracle[record]
        assert sa == pytest.approx([e[0] for e in expected], rel=1e-6)
        assert drift == pytest.approx([e[1] for e in expected], rel=1e-6)  # elastic: drift / scale the same
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
