"""The `hybridsim` command: one module per subcommand, each with ``register(subparsers)``.

Only the module of the subcommand being run is imported (a site daemon does not pay for
scipy.signal or h5py); ``--help`` and unknown commands import them all.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from hybridsim.coordinator.errors import RunStopped, UsageError

SUBCOMMANDS = (
    "hybridsim.coordinator.cli.run",
    "hybridsim.coordinator.cli.site",
    "hybridsim.coordinator.cli.certs",
    "hybridsim.coordinator.cli.study",
    "hybridsim.coordinator.cli.benchmark",
    "hybridsim.coordinator.cli.calibrate",
    "hybridsim.coordinator.cli.monitor",
    "hybridsim.coordinator.cli.report",
    "hybridsim.coordinator.cli.export",
    "hybridsim.coordinator.cli.bench",
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or only ``command``'s when its module is named after it."""
    parser = argparse.ArgumentParser(prog="hybridsim", description="Distributed multi-site hybrid simulation.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    own = f"hybridsim.coordinator.cli.{command}"
    for name in (own,) if own in SUBCOMMANDS else SUBCOMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv[0] if argv else None).parse_args(argv)
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
