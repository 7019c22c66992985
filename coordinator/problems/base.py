"""The interface every reference problem implements, and the output helpers they share.

A problem is one subpackage of :mod:`hybridsim.coordinator.problems` whose ``problem.py`` holds one
:class:`Problem`, registered by one line of :data:`hybridsim.coordinator.problems.PROBLEMS`.
``hybridsim study`` and ``hybridsim benchmark`` build their subcommands from that table
(``hybridsim.coordinator.cli.problems``), which also gives every problem the same ``--json``,
``--out DIR``, ``--no-files`` and ``--plots/--no-plots`` and runs it the same way: check the
output folder, :meth:`Problem.run`, :meth:`Problem.write` the files, print :meth:`Problem.table`
(or :meth:`Problem.summary` as JSON), then draw :meth:`Problem.plots`.

Rules for a new problem (a bridge, a soil-structure system):

- ``run`` validates the problem's own options and raises :class:`~hybridsim.coordinator.errors.UsageError`
  naming the option and the fix; a run that stops early raises
  :class:`~hybridsim.coordinator.errors.RunStopped`;
- ``summary`` is JSON as it is (non-finite numbers as None: :func:`finite`), unrounded;
- ``table`` rounds for reading; the files hold the unrounded values;
- the problem module imports its heavy parts inside ``run`` (``hybridsim study --help`` imports
  every problem module of the command).
"""

from __future__ import annotations

import abc
import argparse
import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

R = TypeVar("R")
CaseT = TypeVar("CaseT")
OutcomeT = TypeVar("OutcomeT")
Progress = Callable[[str], None]
"""takes one line about a finished part of a run (printed to stderr as it comes)"""


class Problem(abc.ABC, Generic[R]):
    """A reference problem: what it needs to run, what it returns, its JSON, its table, its files and plots."""

    command: ClassVar[str]
    """the `hybridsim` subcommand it belongs to: "study" or "benchmark" """
    name: ClassVar[str]
    """its name on the command line (``hybridsim study narx``)"""
    help: ClassVar[str]
    """one line for the command's --help"""
    description: ClassVar[str]
    """its own --help text"""
    outputs: ClassVar[str]
    """what ``write`` (and ``plots``) put in --out DIR, in words"""
    plots_by_default: ClassVar[bool] = True

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the problem's own options (the shared ones are there already)."""

    @abc.abstractmethod
    def run(self, args: argparse.Namespace, progress: Progress) -> R:
        """Validate the options (UsageError naming the option) and run; ``args.no_files``: nothing will be
        written, so histories need not be kept."""

    @abc.abstractmethod
    def summary(self, result: R) -> dict[str, Any]:
        """The JSON object ``--json`` prints (finite numbers only)."""

    @abc.abstractmethod
    def table(self, result: R) -> str:
        """The text printed without ``--json``."""

    @abc.abstractmethod
    def write(self, result: R, out: Path) -> None:
        """Write the result's files (JSON, tables, histories) into the folder ``out``."""

    def plots(self, result: R, out: Path) -> list[Path]:
        """Draw the plots into ``out``; the files written."""
        return []

    def evaluate(self, experiment: Any, results: Path) -> dict[str, Any]:
        """The problem's criteria of a coordinator run (``[evaluation] problem = NAME`` in an experiment)."""
        raise NotImplementedError(f"problem {self.name!r} does not evaluate experiments")

    @classmethod
    def evaluates(cls) -> bool:
        """Whether an experiment's ``[evaluation]`` can name this problem."""
        return cls.evaluate is not Problem.evaluate


# -- studies of named cases ---------------------------------------------------------------------------

def case_options(parser: argparse.ArgumentParser, cases: Mapping[str, Any], duration: float) -> None:
    """``--case KEY|all`` (default all) and ``--duration S`` (default ``duration``) of a study of ``cases``."""
    parser.add_argument("--case", choices=(*cases, "all"), default="all", help="one case or all (default: all)")
    parser.add_argument("--duration", type=float, default=duration,
                        help=f"seconds of the record (default: {duration:g})")


def check_duration(duration: float, record: str) -> None:
    """Refuse a study's ``--duration`` (s) that is not positive or ends before the ground motion ``record`` (a file,
    ``hybridsim:NAME`` for a shipped one) first moves: every response would be zero and every relative
    difference 0/0 (the shipped El Centro is at rest for its first 5 s)."""
    from hybridsim.coordinator.errors import UsageError
    from hybridsim.coordinator.motion import read_motion
    from hybridsim.shipped import resolve

    if not duration > 0:
        raise UsageError(f"--duration must be > 0 s, not {duration:g}")
    motion = read_motion(resolve(record, Path.cwd()))
    moving = np.flatnonzero(motion.acceleration)
    lead = motion.dt * moving[0] if moving.size else math.inf
    if duration <= lead:
        raise UsageError(f"--duration: the record ({record}) is at rest for its first {lead:g} s, so {duration:g} s "
                         f"would compare zeros; give more, e.g. --duration {max(8.0, math.ceil(lead) + 3.0):g}")


def run_cases(cases: Mapping[str, CaseT], choice: str, run: Callable[[CaseT], OutcomeT], progress: Progress,
              line: Callable[[str, OutcomeT], str]) -> list[OutcomeT]:
    """``run`` each of ``cases`` (or the one named ``choice``), a ``line(key, outcome)`` to ``progress`` after each."""
    outcomes = []
    for key in (list(cases) if choice == "all" else [choice]):
        outcomes.append(run(cases[key]))
        progress(line(key, outcomes[-1]))
    return outcomes


# -- output helpers ----------------------------------------------------------------------------------

def finite(tree: Any) -> Any:
    """``tree`` with every non-finite float replaced by None, tuples as lists (JSON without NaN)."""
    if isinstance(tree, dict):
        return {k: finite(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [finite(v) for v in tree]
    if isinstance(tree, float):
        return float(tree) if math.isfinite(tree) else None
    return tree


def write_history(out: Path, key: str, dt: float, columns: list[Any], header: list[str]) -> Path:
    """A case's histories as ``out/KEY.csv`` ('/' in the key as '_'): t (s, every ``dt``), then the rows of
    ``columns`` (arrays of the same length, side by side) under ``header`` (the names after t)."""
    path = out / f"{key.replace('/', '_')}.csv"
    rows = np.hstack([np.reshape(c, (len(c), -1)) for c in columns])
    np.savetxt(path, np.hstack([dt * np.arange(rows.shape[0])[:, None], rows]), delimiter=",", comments="",
               header=",".join(["t", *header]))
    return path


def write_json(path: Path, document: Any) -> None:
    """``document`` as indented JSON (NaN refused) with a final newline."""
    path.write_text(json.dumps(document, indent=1, allow_nan=False) + "\n")


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path) -> Path:
    """Lay out, save at 110 dpi and close ``fig``; its path."""
    plt = pyplot()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
