"""`hybridsim study` / `benchmark`: the closing line names the files this run wrote, plots only when drawn."""

from __future__ import annotations

import argparse
import re
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


def test_the_overview_help_lists_every_study_and_benchmark_of_the_registry(capsys) -> None:
    """`hybridsim --help` names them without importing them (from the registry's class names): each listed under
    the command its class declares."""
    from hybridsim.coordinator.cli import main
    from hybridsim.coordinator.problems import PROBLEMS, problem

    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    listed = {command: re.search(rf"run a reference {command} \(([^)]*)\)", out).group(1).split(", ")
              for command in ("study", "benchmark")}
    assert {name: problem(name).command for name in PROBLEMS} == {n: c for c, names in listed.items() for n in names}
    assert {"bridge", "ssi"} <= set(listed["study"])
