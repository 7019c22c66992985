"""The study: V7 on the building, and `hybridsim study implicit-rths` end to end on the short cases."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.problems.implicit_rths.cases import METHODS, Variant, build_case, run_variant

RUN_KEYS = {"method", "rho_e", "iterations_mean", "iterations_max", "peak_error_pct", "rms_error_pct",
            "us_per_iteration"}


@pytest.mark.parametrize("method", ["ncdc-nearest", "ncdc-interp"])
def test_v7_about_three_solves_per_step_on_the_building_with_rho_zero(method: str) -> None:
    """q = K_E / (K_PD,ee + K_N,ee) = 20e3 / 4.06e6 ~ 0.005: from ~1e-3 m increments, the second solve still
    moves ~5e-6 m > 1e-7 m and the third ~2.5e-8 m: three solves (two on the quietest steps)."""
    run = run_variant(build_case("M1", short=True), Variant(method, 0.0))
    iterations = run.history.iterations
    assert np.median(iterations) == 3
    assert 2 <= iterations.min() and iterations.max() <= 4
    assert all(r.converged for r in run.history.reports)


def study(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["study", "implicit-rths", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_s1_json_and_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = study(capsys, "--case", "S1", "--out", str(tmp_path))
    assert list(out["cases"]) == ["S1"] and "sensitivity" not in out
    runs = {(r["method"], r["rho_e"]): r for r in out["cases"]["S1"]}
    assert set(runs) == {(m, rho) for m in METHODS for rho in (0, 1)}
    for r in runs.values():
        assert set(r) == RUN_KEYS | {"first_step_error_pct"}
        assert r["us_per_iteration"] > 0
    assert runs["shing", 1]["peak_error_pct"] < 1e-9  # V3
    assert runs["efcm-deadbeat", 1]["peak_error_pct"] < 1e-9  # V4
    assert runs["efcm", 0]["peak_error_pct"] > 1e6  # V6: the loop diverges
    assert runs["shing", 0]["iterations_mean"] == runs["shing", 0]["iterations_max"] == 10
    for name in ("S1_displacement.png", "S1_iterations.png", "table.txt", "results.json"):
        assert (tmp_path / name).stat().st_size > 0
    full = json.loads((tmp_path / "results.json").read_text())
    assert full["S1"]["steps"] == 25 and len(full["S1"]["runs"]) == 10


def test_cli_bilinear_short_case_has_sensitivity_runs_and_a_hysteresis_plot(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = study(capsys, "--case", "M2", "--short", "--out", str(tmp_path))
    for r in out["cases"]["M2"]:
        assert set(r) == RUN_KEYS  # no single-step error for a nonlinear specimen
    variants = {(r["method"], r["variant"]) for r in out["sensitivity"]["M2"]}
    assert variants == {("ncdc-nearest", "dtau=1dt"), ("ncdc-interp", "dtau=1dt"), ("ncdc-nearest", "dtau=4dt"),
                        ("ncdc-interp", "dtau=4dt"), ("ncdc-nearest", "window=2steps"),
                        ("ncdc-interp", "window=2steps"), ("efcm", "no-lead"), ("shing", "order=2")}
    assert all(r["rho_e"] == 1 for r in out["sensitivity"]["M2"])
    assert (tmp_path / "M2_hysteresis.png").stat().st_size > 0


def test_cli_refuses_an_output_path_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["study", "implicit-rths", "--case", "S1", "--out", str(blocker / "sub")]) == 2
    assert "--out" in capsys.readouterr().err


def test_cli_refuses_an_unknown_case(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["study", "implicit-rths", "--case", "S9"])
    assert exc.value.code == 2
