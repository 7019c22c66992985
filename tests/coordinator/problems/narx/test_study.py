"""The NARX study: its case matrix follows COMPENSATORS.md; one short-record run through the CLI (--json)."""

from __future__ import annotations

import json

import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.problems.narx import study
from hybridsim.coordinator.problems.marths.evaluation import CRITERIA


def test_the_case_matrix_is_the_one_of_compensators_md() -> None:
    by_name = {c.name: c for c in study.cases()}
    assert len(by_name) == len(study.cases())  # names are unique
    defined = [c.narx for c in by_name.values() if c.kind == "narx" and not (c.narx.filter_command or c.narx.gated)]
    assert sorted(n.window for n in defined if n.order == 2 and not n.products) == [128, 1024, 8192]
    assert sorted(n.order for n in defined if n.window == 1024 and not n.ridge and not n.products) == [1, 2, 4]
    assert sorted(n.ridge for n in defined if n.ridge) == [1e-9, 1e-7, 1e-2, 1.0]
    assert all(n.order == 4 and n.window == 1024 for n in defined if n.ridge)
    products = [n.products for n in defined if n.products]
    assert ((2, 2),) in products and ((1, 2),) in products and len(products) == 6  # x[n-2]^2, x[n-1] x[n-2], ...
    assert {"none", "rls", "ic-good", "ic-poor"} <= set(by_name)
    assert by_name["ic-poor"].delay_fraction == 0.5
    # every case of the definition also runs with both changes, named -fg; -f and -g apart on narx2-L1024
    assert {f"{n.name}-fg" for n in defined} <= set(by_name)
    assert {"narx2-L1024-f", "narx2-L1024-g", "narx1-L1024-g"} <= set(by_name)


def test_a_short_study_through_the_cli_prints_the_specified_json(tmp_path, capsys) -> None:
    """6.5 s of El Centro (5 s rest + 1.5 s of shaking): good IC, a runaway (4th-order OLS) and NARX -fg."""
    code = main(["study", "narx", "--json", "--duration", "6.5", "--out", str(tmp_path),
                 "--case", "ic-good", "--case", "narx4-L1024", "--case", "narx2-L1024-fg"])
    assert code == 0
    cases = json.loads(capsys.readouterr().out)["cases"]
    assert list(cases) == ["ic-good", "narx4-L1024", "narx2-L1024-fg"]
    for case in cases.values():
        assert set(case) == {"compensator", "parameters", "unstable", "reason", "J"}
        assert list(case["J"]) == list(CRITERIA)
        assert [len(case["J"][j]) for j in CRITERIA] == [2, 2, 2, 2, 2, 2, 2, 4, 2, 4]
    setting = json.loads((tmp_path / "results.json").read_text())["setting"]
    delays = setting["uncompensated_delay_s"]
    ic = cases["ic-good"]
    assert ic["compensator"] == "inverse" and not ic["unstable"] and ic["reason"] is None
    assert ic["parameters"]["a0"] == pytest.approx([1 + d * 1024 for d in delays], rel=1e-12)
    runaway = cases["narx4-L1024"]
    assert runaway["unstable"] and "saturates the servo input" in runaway["reason"]
    assert max(runaway["parameters"]["peak_abs"][0]) > 1e3
    narx = cases["narx2-L1024-fg"]
    assert narx["compensator"] == "narx" and narx["parameters"]["filter_command"] is True
    assert narx["parameters"]["excitation_mm"] == pytest.approx(10 * 0.0123935, rel=1e-4)
    for name in ("results.json", "table.txt", "parameters.h5", "criteria.png", "tracking.png"):
        assert (tmp_path / name).is_file()


def test_an_unknown_case_is_a_usage_error(tmp_path, capsys) -> None:
    assert main(["study", "narx", "--case", "narx9", "--out", str(tmp_path)]) == 2
    assert "--case narx9: no such case" in capsys.readouterr().err
