"""`hybridsim study` / `benchmark`: the closing line names the files this run wrote, plots only when drawn."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from hybridsim.coordinator.cli.problems import run_problem
from hybridsim.coordinator.problems.base import Problem


class TwoFiles(Problem[int]):
    """A problem whose files and plot are known: results.json, and plot.png when plots are drawn."""

    command, name, help, description = "study", "two-files", "", ""
    outputs = "results.json and a plot"

    def run(self, args: argparse.Namespace, progress) -> int:
        return 3

    def summary(self, result: int) -> dict:
        return {"value": result}

    def table(self, result: int) -> str:
        return f"value {result}"

    def write(self, result: int, out: Path) -> None:
        (out / "results.json").write_text('{"value": 3}')

    def plots(self, result: int, out: Path) -> list[Path]:
        (out / "plot.png").write_bytes(b"png")
        return [out / "plot.png"]


@pytest.mark.parametrize("plots, listed", [(True, "plot.png, results.json"), (False, "results.json")])
def test_the_closing_line_lists_what_was_written(tmp_path: Path, capsys, plots: bool, listed: str) -> None:
    out = tmp_path / "out"
    args = argparse.Namespace(no_files=False, out=out, json=False, plots=plots)
    assert run_problem(TwoFiles(), args) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"written in {out}: {listed}"
