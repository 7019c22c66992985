"""hybridsim: distributed, multi-site hybrid simulation for earthquake engineering.

    >>> import hybridsim
    >>> experiment = hybridsim.load_experiment("examples/sdof.toml")
    >>> result = hybridsim.run(experiment)
    >>> result["x"]              # displacement history of DOF "x" (m)

One namespace, three parts that the repository keeps in their own folders:
``hybridsim.coordinator`` (the experiment, the integrators, the run, the CLI, the reference
problems), ``hybridsim.modules`` (the module servers: linear, spring, opensees, experimental,
plant) and ``hybridsim.wire`` (the contract and the code that carries it, imported by both
sides and importing neither); ``hybridsim.v1`` is the code generated from the ``.proto`` files.

The names below are imported on first use, so that importing a part (a site daemon's wire)
does not load the coordinator.
"""

from __future__ import annotations

from typing import Any

_API = {
    "Experiment": "hybridsim.coordinator.experiment:Experiment",
    "ExperimentError": "hybridsim.coordinator.experiment:ExperimentError",
    "load_experiment": "hybridsim.coordinator.experiment:load_experiment",
    "parse_experiment": "hybridsim.coordinator.experiment:parse_experiment",
    "RunResult": "hybridsim.coordinator.simulation:RunResult",
    "run": "hybridsim.coordinator.simulation:run_experiment",
    "resume": "hybridsim.coordinator.simulation:resume_run",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    from hybridsim.registry import load

    try:
        return load(_API, name)
    except KeyError:
        raise AttributeError(f"module 'hybridsim' has no attribute {name!r}") from None
