"""The `hybridsim` command: one module per subcommand, each with ``register(subparsers)``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from coordinator.errors import RunStopped, UsageError

SUBCOMMANDS = (
    "coordinator.cli.run",
    "coordinator.cli.site",
    "coordinator.cli.study",
    "coordinator.cli.benchmark",
    "coordinator.cli.calibrate",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hybridsim", description="Distributed multi-site hybrid simulation.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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
