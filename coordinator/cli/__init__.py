"""The `hybridsim` command: one module per subcommand, each with ``register(subparsers)``.

Only the module of the subcommand being run is imported (a site daemon does not pay for
scipy.signal or h5py); ``hybridsim --help`` lists the subcommands from :data:`SUBCOMMANDS` alone and
imports none of them (it answers in well under half a second).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

from hybridsim.coordinator.allocator import one_arena
from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.problems import listed
from hybridsim.registry import resolve
from hybridsim.wire.daemons_folders import sweep_stale

CLI = "hybridsim.coordinator.cli"
SUBCOMMANDS = {
    "run": (f"{CLI}.run:register", "run an experiment file"),
    "resume": (f"{CLI}.run:register", "continue a stopped run from its last checkpoint"),
    "site": (f"{CLI}.site:register", "serve one module (a site) over gRPC"),
    "site-control": (f"{CLI}.site_control:register", "say whether a site is held and why; --clear clears its hold"),
    "certs": (f"{CLI}.certs:register", "make a test CA and certificates for mutual TLS"),
    "study": (f"{CLI}.problems:register", "run a reference study ({study})"),
    "benchmark": (f"{CLI}.problems:register", "run a reference benchmark ({benchmark})"),
    "rehearse": (f"{CLI}.rehearse:register", "rehearse an experiment under its sites' uncertainty: GO or NO-GO"),
    "campaign": (f"{CLI}.campaign:register", "run an experiment many times: a grid, records, seeded draws"),
    "campaign-report": (f"{CLI}.campaign_report:register", "IDA, fragility, J and tornado plots of a campaign table"),
    "calibrate": (f"{CLI}.calibrate:register", "redo a benchmark's offline calibration (maRTHS RLS)"),
    "monitor": (f"{CLI}.monitor:register", "serve the live monitor page of a running test"),
    "report": (f"{CLI}.report:register", "write an HTML report of a results file"),
    "export": (f"{CLI}.export:register", "write a results file as .mat or CSV files (with units)"),
    "verify": (f"{CLI}.verify:register", "check a results file's checksums and say what is intact"),
    "examples": (f"{CLI}.examples:register", "list the shipped examples or copy them into a folder"),
    "bench": (f"{CLI}.bench:register", "measure speed against the physical floors on this machine"),
    "network": (f"{CLI}.network:register", "an emulated network path (latency, jitter, loss) in front of a TCP server"),
}
"""subcommand -> (the registry line of the function that adds it to the parser, the one line --help shows, where
{study} and {benchmark} are the problems of those commands); subcommands that share a module share its ``register``"""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``command`` (only its module imported), or with every subcommand (all imported)."""
    parser, sub = _parser()
    lines = [SUBCOMMANDS[command][0]] if command in SUBCOMMANDS else dict.fromkeys(m for m, _ in SUBCOMMANDS.values())
    for line in lines:
        resolve(line)(sub)
    return parser


def overview_parser() -> argparse.ArgumentParser:
    """The parser of `hybridsim --help`: every subcommand's one line, nothing imported."""
    parser, sub = _parser()
    problems = {command: ", ".join(listed(command)) for command in ("study", "benchmark")}
    for name, (_, line) in SUBCOMMANDS.items():
        sub.add_parser(name, help=line.format(**problems), add_help=False)
    return parser


def _parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = argparse.ArgumentParser(prog="hybridsim", description="Distributed multi-site hybrid simulation.")
    return parser, parser.add_subparsers(dest="command", required=True, metavar="COMMAND")


def main(argv: Sequence[str] | None = None) -> int:
    one_arena()  # before any thread: the coordinator's and every site daemon's (hybridsim.coordinator.allocator)
    sweep_stale()  # the temporary folders of hybridsim processes killed with kill -9 (hybridsim.wire.daemons_folders)
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0]) if argv and argv[0] in SUBCOMMANDS else overview_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"hybridsim {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except RunStopped as exc:
        print(f"hybridsim {args.command}: stopped: {exc}{_notes(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        named = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
        print(f"hybridsim {args.command}: interrupted{named}{_notes(exc)}", file=sys.stderr)
        return 130  # SIGTERM alike (docker stop: tests/deploy/test_containers.py)
    except BrokenPipeError:  # the reader went away (`hybridsim examples | head`): quiet, as a shell tool
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush must not raise again
        return 128 + signal.SIGPIPE


def _notes(exc: BaseException) -> str:
    """What was added to a stop on its way out (e.g. what the results file keeps), on the same line."""
    return "".join(f"; {note}" for note in getattr(exc, "__notes__", ()))


if __name__ == "__main__":
    sys.exit(main())
