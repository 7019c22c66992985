"""`hybridsim study NAME` and `hybridsim benchmark NAME`: the reference problems, all run the same way.

Each problem of :data:`hybridsim.coordinator.problems.PROBLEMS` becomes ``hybridsim COMMAND NAME`` with
its own options (:meth:`~hybridsim.coordinator.problems.base.Problem.arguments`) and the shared ones:
``--json`` (print the summary as one JSON object instead of the table), ``--out DIR`` (the files),
``--no-files`` and ``--plots/--no-plots``.  Progress lines go to stderr as parts finish.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from hybridsim.coordinator.errors import UsageError

COMMANDS = {
    "study": ("run a reference study: every method on its cases, compared",
              "Run a reference study and report it (table, JSON, plots)."),
    "benchmark": ("run a reference benchmark (maRTHS)",
                  "Run a reference benchmark and report its evaluation criteria."),
}
"""command -> (its one line in --help, its description)"""


def register(subparsers: argparse._SubParsersAction) -> None:
    from hybridsim.coordinator.problems import problems

    for command, (line, description) in COMMANDS.items():
        parser = subparsers.add_parser(command, help=line, description=description)
        names = parser.add_subparsers(dest="problem", required=True, metavar=command.upper())
        for problem in problems(command):
            sub = names.add_parser(problem.name, help=problem.help, description=problem.description,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
            problem.arguments(sub)
            sub.add_argument("--json", action="store_true",
                             help="print the summary as one JSON object instead of the table")
            sub.add_argument("--out", type=Path, default=Path("results") / problem.name.replace("-", "_"),
                             metavar="DIR", help=f"folder for {problem.outputs} (default: %(default)s)")
            sub.add_argument("--no-files", action="store_true", help="write nothing, only print")
            sub.add_argument("--plots", action=argparse.BooleanOptionalAction, default=problem.plots_by_default,
                             help="draw the plots into --out after printing (default: %(default)s)")
            sub.set_defaults(func=lambda args, problem=problem: run_problem(problem, args))


def run_problem(problem, args: argparse.Namespace) -> int:
    """Check --out, run, write the files, print the table or the JSON, then draw the plots."""
    out = None if args.no_files else writable_directory(args.out)
    start, started_at = time.perf_counter(), time.time() - 1.0
    result = problem.run(args, _progress)
    wall = time.perf_counter() - start
    if out is not None:
        problem.write(result, out)
    if args.json:
        json.dump(problem.summary(result), sys.stdout, allow_nan=False)
        print()
    else:
        print(problem.table(result))
        print(f"\nwall time {wall:.1f} s")
    if args.plots and out is not None:
        sys.stdout.flush()
        problem.plots(result, out)
    if out is not None and not args.json:
        written = sorted(p.name for p in out.iterdir() if p.is_file() and p.stat().st_mtime >= started_at)
        print(f"written in {out}: {', '.join(written) or 'nothing'}")
    return 0


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def writable_directory(path: Path) -> Path:
    """``path``, created if needed, after a test write; UsageError naming --out when it cannot be written."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot write there ({exc.strerror}); give a writable directory") from None
    return path
