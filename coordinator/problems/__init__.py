"""The reference problems, one subpackage each behind one interface (:class:`base.Problem`).

``PROBLEMS`` is the registry: ``hybridsim study`` and ``hybridsim benchmark`` list the problems of
their command from it, and an experiment's ``[evaluation] problem = "..."`` names one that
evaluates a coordinator run.  Adding a problem (a bridge, a soil-structure system) is one
subpackage with a ``problem.py`` and one line here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hybridsim.registry import load

PROBLEMS: dict[str, str] = {
    "marths": "hybridsim.coordinator.problems.marths.problem:MarthsBenchmark",
    "implicit-rths": "hybridsim.coordinator.problems.implicit_rths.problem:ImplicitRthsStudy",
    "narx": "hybridsim.coordinator.problems.narx.problem:NarxStudy",
    "bridge": "hybridsim.coordinator.problems.bridge.problem:BridgeStudy",
    "ssi": "hybridsim.coordinator.problems.ssi.problem:SsiStudy",
    "integrators": "hybridsim.coordinator.problems.integrators.problem:IntegratorsStudy",
    "dynamic": "hybridsim.coordinator.problems.dynamic.problem:DynamicStudy",
    "column": "hybridsim.coordinator.problems.column.problem:ColumnStudy",
}


def listed(command: str) -> list[str]:
    """The names of the problems of `hybridsim COMMAND`, from the registry alone (nothing imported: a problem's
    class name ends in its command, ``...Study`` or ``...Benchmark``; a test holds each to its ``command``)."""
    return [name for name, line in PROBLEMS.items() if line.endswith(command.capitalize())]


def problem(name: str) -> Any:
    """The problem registered as ``name`` (KeyError if none is)."""
    return load(PROBLEMS, name)()


def problems(command: str) -> list[Any]:
    """The problems of `hybridsim COMMAND` ("study" or "benchmark"), in the registry's order."""
    return [p for p in map(problem, PROBLEMS) if p.command == command]


def evaluating() -> list[str]:
    """The names an experiment's ``[evaluation] problem`` may take."""
    return [name for name in PROBLEMS if load(PROBLEMS, name).evaluates()]


def evaluate(experiment: Any, results: Path) -> dict[str, Any]:
    """The criteria of ``experiment``'s reference problem for the run stored in ``results``."""
    return problem(experiment.evaluation["problem"]).evaluate(experiment, results)
