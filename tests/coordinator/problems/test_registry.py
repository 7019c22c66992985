"""The problems registry, the shared plumbing of `hybridsim study` / `hybridsim benchmark`, the executors."""

from __future__ import annotations

import ast
import math
import operator
import os
import subprocess
import sys
import tempfile

from hybridsim.coordinator.cli import build_parser, main
from hybridsim.coordinator.cli.problems import COMMANDS
from hybridsim.coordinator.problems import PROBLEMS, evaluating, problems
from hybridsim.coordinator.problems.base import Problem, finite
from hybridsim.coordinator.problems.executors import EXECUTORS, Resources, executor_for


def _subcommands(parser, *path: str) -> list[str]:
    for name in path:
        parser = next(a for a in parser._subparsers._group_actions).choices[name]
    return list(next(a for a in parser._subparsers._group_actions).choices)


def test_every_registered_problem_implements_the_interface_and_its_command_lists_it() -> None:
    found = [p for command in COMMANDS for p in problems(command)]
    assert sorted(p.name for p in found) == sorted(PROBLEMS) == ["bridge", "column", "dynamic", "implicit-rths",
                                                                               "integrators", "marths", "narx", "ssi"]
    assert all(isinstance(p, Problem) and p.outputs and p.help and p.description for p in found)
    assert _subcommands(build_parser("study"), "study") == ["implicit-rths", "narx", "bridge", "ssi", "integrators",
                                                                  "dynamic", "column"]
    assert _subcommands(build_parser("benchmark"), "benchmark") == ["marths"]
    assert evaluating() == ["marths"]


def test_no_files_writes_nothing_and_prints_the_table(tmp_path, capsys) -> None:
    out = tmp_path / "not-made"
    assert main(["study", "implicit-rths", "--case", "S1", "--no-files", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("S1 S1_sdof_large_step: Dt = 0.04 s, dt = 0.004 s, 25 steps")
    assert not out.exists()


def test_finite_makes_json_without_nan() -> None:
    assert finite({"a": [1.0, math.nan, (math.inf, 2)], "b": None}) == {"a": [1.0, None, [None, 2]], "b": None}


def test_every_executor_returns_the_results_in_the_jobs_order() -> None:
    jobs = [(2, 10), (3, 5), (7, 2)]
    seen: list[int] = []
    assert executor_for(Resources(), 3) == "serial" and executor_for(Resources(workers=2), 3) == "pool"
    assert executor_for(Resources(workers=2), 1) == "serial" and executor_for(Resources(scheduler="x"), 1) == "dask"
    for name in ("serial", "pool"):
        seen.clear()
        assert EXECUTORS[name](operator.pow, jobs, Resources(workers=2), seen.append) == [1024, 243, 49]
        assert sorted(seen) == [49, 243, 1024]


def test_a_pool_keeps_its_temporary_files_in_a_folder_of_its_process_not_pymp() -> None:
    """forkserver (Python 3.14's default on Linux) keeps its socket in multiprocessing's temporary folder: the pool's
    is the process's own hsmpPID-* (swept after a kill -9), no pymp-* during the run or after it.  The temporary
    folder is a short one of its own: a socket's path holds at most 107 bytes, which pytest's tmp_path under
    xdist can leave no room for (multiprocessing then keeps its pymp-* folder, as it must)."""
    script = ("import os, sys\n"
              "from hybridsim.coordinator.problems.executors import Resources, process_pool\n"
              "print(process_pool(os.listdir, [(sys.argv[1],)] * 2, Resources(2, start_method='forkserver'), None)[0])")
    with tempfile.TemporaryDirectory(prefix="hs") as folder:
        run = subprocess.run([sys.executable, "-c", script, folder], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "TMPDIR": folder}, check=True)
        during = ast.literal_eval(run.stdout)
        assert len(during) == 1 and during[0].startswith("hsmp"), during
        assert os.listdir(folder) == []


def test_a_study_duration_that_ends_before_the_record_moves_is_refused_before_anything_starts(capsys) -> None:
    """The shipped El Centro is at rest until t = 5 s (its first non-zero sample): a bridge or SSI study that
    stops by then would compare zeros (max_rel_diff 0/0, null in --json), so it exits 2 naming --duration;
    the bridge's default is 8 s, the length of its documented figures."""
    for argv in (["bridge", "--case", "linear-ideal", "--duration", "5"], ["ssi", "--case", "elastic",
                                                                           "--duration", "4.99"]):
        assert main(["study", *argv, "--no-files"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "--duration: the record" in err and "first 5 s" in err
    assert main(["study", "bridge", "--duration", "0", "--no-files"]) == 2
    assert "--duration must be > 0 s, not 0" in capsys.readouterr().err
    assert build_parser("study").parse_args(["study", "bridge"]).duration == 8.0
