"""`hybridsim benchmark marths`: the JSON shape of the issue, the files it writes, bad options."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.io

from hybridsim.coordinator.cli import main

SHAPE = {"J1": 2, "J2": 2, "J3": 2, "J4": 2, "J5": 2, "J6": 2, "J7": 2, "J8": 4, "J9": 2, "J10": 4}


def _run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["benchmark", "marths", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_uncertain_campaign_json_files_and_parallel_equals_serial(capsys, tmp_path: Path) -> None:
    argv = ("--plant", "uncertain", "--trials", "2", "--duration", "6", "--compensator", "rls")
    result = _run_json(capsys, *argv, "--workers", "2", "--out", str(tmp_path), "--plots")
    assert set(result) == {"nominal", "trials", "mean", "max_command_volts", "realizable", "wall_s"}
    assert len(result["trials"]) == 2
    for j in (result["nominal"], result["mean"], *result["trials"]):
        assert {k: len(v) for k, v in j.items()} == SHAPE
    for name in SHAPE:  # the mean is over the uncertain runs only
        np.testing.assert_allclose(result["mean"][name], np.mean([t[name] for t in result["trials"]], axis=0),
                                   rtol=1e-14)
    assert result["nominal"]["J2"] != result["trials"][0]["J2"]
    assert round(result["nominal"]["J2"][0], 1) != result["nominal"]["J2"][0]  # unrounded
    assert result["realizable"] is True and len(result["max_command_volts"]) == 2

    serial = _run_json(capsys, *argv, "--workers", "1", "--no-files")
    assert serial["trials"] == result["trials"] and serial["nominal"] == result["nominal"]

    with h5py.File(tmp_path / "histories.h5") as f:
        assert sorted(f) == ["nominal", "trial01", "trial02"]
        assert f["nominal/xa1_t"].shape == (6 * 1024 + 1,)
        assert json.loads(f["trial02"].attrs["spec"])["plant_seed"] == 1002
        assert json.loads(f["trial01"].attrs["J"]) == result["trials"][0]
    mat = scipy.io.loadmat(tmp_path / "histories.mat")
    assert mat["trial01"]["xRef"][0, 0].shape == (6 * 1024 + 1, 1)
    for name in ("strokes", "synchronization", "interface", "storeys", "j_bars"):
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000
    assert json.loads((tmp_path / "summary.json").read_text())["trials"] == result["trials"]


def test_table_rounds_to_a_tenth(capsys) -> None:
    assert main(["benchmark", "marths", "--plant", "ideal-delay", "--compensator", "none", "--duration", "10",
                 "--no-files"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("J1 "))
    assert row.split()[-1] == "1.0"  # 0.977 ms, one sample
    assert "realizable" in out


@pytest.mark.parametrize("argv", [
    ["--plant", "ideal"],  # an ideal plant needs --compensator none
    ["--trials", "3"],  # trials need --plant uncertain
    ["--plant", "uncertain", "--trials", "0"],
    ["--scale", "-1"],
    ["--workers", "0"],
    ["--duration", "4"],  # the records are zero for their first 5 s
])
def test_bad_options_exit_2_naming_the_option(capsys, argv: list[str]) -> None:
    assert main(["benchmark", "marths", *argv, "--no-files"]) == 2
    assert "--" in capsys.readouterr().err


def test_a_guard_that_trips_stops_the_run_with_its_reason_also_from_the_process_pool(capsys) -> None:
    """Uncompensated El Centro x 3 needs 5 V on actuator 2 (0.66 V at x 0.4): the 3.8 V guard stops it."""
    argv = ["benchmark", "marths", "--compensator", "none", "--scale", "3", "--duration", "8", "--no-files"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "stopped: actuator 2: command" in err and "saturates the servo input" in err and "beyond +-3.8 V" in err
    assert main([*argv, "--plant", "uncertain", "--trials", "1", "--workers", "2"]) == 1  # pickled back from a worker
    assert "saturates the servo input" in capsys.readouterr().err


def test_without_the_guard_saturation_is_only_flagged_as_the_benchmark_does(capsys) -> None:
    """x 6: 0.33 and 0.66 V at x 0.4 become about 5 and 10 V: both beyond 3.8 V, so not realizable."""
    result = _run_json(capsys, "--compensator", "none", "--scale", "6", "--duration", "8", "--guard", "off",
                       "--no-files")
    assert min(result["max_command_volts"]) > 3.8 and result["realizable"] is False


def test_inverse_compensation_prints_the_delays_it_assumes(capsys) -> None:
    assert main(["benchmark", "marths", "--compensator", "inverse", "--duration", "10", "--no-files"]) == 0
    out = capsys.readouterr().out
    assert "compensator inverse (delays 40.04 / 23.44 ms, J1 uncompensated)" in out  # 41 and 24 samples
