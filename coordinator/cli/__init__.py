"""The `hybridsim` command: one module per subcommand, each with ``register(subparsers)``.

Only the module of the subcommand being run is imported (a site daemon does not pay for
scipy.signal or h5py); ``hybridsim --help`` lists the subcommands from :data:`SUBCOMMANDS` alone and
imports none of them (it answers in well under half a second).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from hybridsim.coordinator.errors import RunStopped, UsageError

SUBCOMMANDS = {
    "run": ("run", "run an experiment file"),
    "resume": ("run", "continue a stopped run from its last checkpoint"),
    "site": ("site", "serve one module (a site) over gRPC"),
    "certs": ("certs", "make a test CA and certificates for mutual TLS"),
    "study": ("problems", "run a reference study (narx, implicit-rths)"),
    "benchmark": ("problems", "run a reference benchmark (maRTHS)"),
    "calibrate": ("calibrate", "redo a benchmark's offline calibration (maRTHS RLS)"),
    "monitor": ("monitor", "serve the live monitor page of a running test"),
    "report": ("report", "write an HTML report of a results file"),
    "export": ("export", "write a results file as .mat or CSV files (with units)"),
    "examples": ("examples", "list the shipped examples or copy them into a folder"),
    "bench": ("bench", "measure speed against the physical floors on this machine"),
}
"""subcommand -> (its module in hybridsim.coordinator.cli, the one line --help shows)"""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``command`` (only its module imported), or with every subcommand (all imported)."""
    parser, sub = _parser()
    modules = [SUBCOMMANDS[command][0]] if command in SUBCOMMANDS else dict.fromkeys(m for m, _ in SUBCOMMANDS.values())
    for module in modules:
        importlib.import_module(f"hybridsim.coordinator.cli.{module}").register(sub)
    return parser


def overview_parser() -> argparse.ArgumentParser:
    """The parser of `hybridsim --help`: every subcommand's one line, nothing imported."""
    parser, sub = _parser()
    for name, (_, line) in SUBCOMMANDS.items():
        sub.add_parser(name, help=line, add_help=False)
    return parser


def _parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = argparse.ArgumentParser(prog="hybridsim", description="Distributed multi-site hybrid simulation.")
    return parser, parser.add_subparsers(dest="command", required=True, metavar="COMMAND")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0]) if argv and argv[0] in SUBCOMMANDS else overview_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"hybridsim {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except RunStopped as exc:
        print(f"hybridsim {args.command}: stopped: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"hybridsim {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
