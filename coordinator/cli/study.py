"""`hybridsim study STUDY`: reference studies that compare methods, one small function per study."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hybridsim.coordinator.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("study", help="run a reference study: every method on its cases, compared",
                                   description="Run a reference study and report it (table, JSON, plots).")
    studies = parser.add_subparsers(dest="study", required=True, metavar="STUDY")
    _register_implicit_rths(studies)
    _register_narx(studies)


# -- implicit-rths --------------------------------------------------------------------------------------

def _register_implicit_rths(studies: argparse._SubParsersAction) -> None:
    from hybridsim.coordinator.problems.implicit_rths.cases import CASE_KEYS

    parser = studies.add_parser(
        "implicit-rths", help="Shing, EFCM and nearly-complete delay compensation vs the exact reference",
        description="The implicit RTHS benchmark (Wang, Liu, Wu, Xu 2015): every method and variant on the "
                    "cases, errors against the exact reference, iterations per step, compute time per iteration.")
    parser.add_argument("--case", choices=(*CASE_KEYS, "all"), default="all",
                        help="one case or all of them (default: all)")
    parser.add_argument("--json", action="store_true",
                        help='print {"cases": {case: [run, ...]}, "sensitivity": {...}} instead of the tables')
    parser.add_argument("--out", type=Path, default=Path("results/implicit_rths"), metavar="DIR",
                        help="directory for plots, results.json and the tables (default: results/implicit_rths)")
    parser.add_argument("--short", action="store_true", help="only the first 10 s of the building cases")
    parser.set_defaults(func=_implicit_rths)


def _implicit_rths(args: argparse.Namespace) -> int:
    from hybridsim.coordinator.problems.implicit_rths.cases import CASE_KEYS, run_study
    from hybridsim.coordinator.problems.implicit_rths.metrics import case_metrics
    from hybridsim.coordinator.problems.implicit_rths.report import (format_table, format_timing, full_json, study_json,
                                                           write_plots)

    out = _writable_directory(args.out)
    keys = list(CASE_KEYS) if args.case == "all" else [args.case]
    studies = run_study(keys, short=args.short)
    metrics = {s.case.key: case_metrics(s) for s in studies}
    tables = []
    for s in studies:
        standard, sensitivity = metrics[s.case.key]
        tables.append(format_table(s, standard, sensitivity))
        if s.case.key == "M1":
            tables.append(format_timing(s, standard))
        write_plots(s, standard, out)
    text = "\n\n".join(tables)
    (out / "table.txt").write_text(text + "\n")
    (out / "results.json").write_text(json.dumps(full_json(studies, metrics), indent=1, allow_nan=False) + "\n")
    if args.json:
        json.dump(study_json(studies, metrics), sys.stdout, allow_nan=False)
        print()
    else:
        print(text)
        print(f"\nplots, table.txt and results.json in {out}")
    return 0


# -- narx -----------------------------------------------------------------------------------------------

def _register_narx(studies: argparse._SubParsersAction) -> None:
    parser = studies.add_parser(
        "narx", help="delay compensators on the maRTHS benchmark: inverse, NARX (OLS, ridge, nonlinear terms), RLS-AC",
        description="The compensator study of COMPENSATORS.md on the maRTHS benchmark (El Centro at 40 %, nominal "
                    "plant): J1..J10 of every case, unstable cases marked, parameter histories and plots.")
    parser.add_argument("--json", action="store_true",
                        help='print {"cases": {name: {"compensator", "parameters", "unstable", "reason", "J"}}} '
                             "instead of the table")
    parser.add_argument("--out", type=Path, default=Path("results/narx"), metavar="DIR",
                        help="folder for results.json, table.txt, parameters.h5 and the plots "
                             "(default: results/narx)")
    parser.add_argument("--case", action="append", metavar="NAME",
                        help="only this case (repeatable); the uncompensated run always runs first")
    parser.add_argument("--duration", type=float, metavar="S", help="only the first S s of the record")
    parser.set_defaults(func=_narx)


def _narx(args: argparse.Namespace) -> int:
    from hybridsim.coordinator.problems.narx.study import cases, run_study, study_json
    from hybridsim.coordinator.problems.narx.report import format_table, write_results

    if args.duration is not None and not args.duration > 0:
        raise UsageError(f"--duration: give a positive number of seconds, not {args.duration}")
    unknown = sorted(set(args.case or ()) - {c.name for c in cases()})
    if unknown:
        raise UsageError(f"--case {unknown[0]}: no such case; the study has {', '.join(c.name for c in cases())}")
    out = _writable_directory(args.out)

    def progress(result) -> None:
        status = f"unstable: {result.reason}" if result.unstable else "stable"
        print(f"{result.case.name}: {status} ({result.wall_s:.1f} s)", file=sys.stderr, flush=True)

    study = run_study(args.case, args.duration, progress)
    write_results(study, out)
    if args.json:
        json.dump(study_json(study), sys.stdout, allow_nan=False)
        print()
    else:
        print(format_table(study))
        print(f"\nresults.json, table.txt, parameters.h5 and plots in {out}")
    return 0


def _writable_directory(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot write there ({exc.strerror}); give a writable directory") from None
    return path
