"""hybridsim's coordinator: load an experiment, run it, get the response arrays back.

    >>> import coordinator
    >>> exp = coordinator.load_experiment("examples/sdof.toml")
    >>> result = coordinator.run(exp)
    >>> result["x"]              # displacement history of DOF "x" (m)

The names below are imported on first use, so that importing a submodule (a site daemon's
``coordinator.cli.site``) does not load the whole coordinator.
"""

from __future__ import annotations

import importlib
from typing import Any

_API = {
    "Experiment": "coordinator.experiment",
    "ExperimentError": "coordinator.experiment",
    "load_experiment": "coordinator.experiment",
    "parse_experiment": "coordinator.experiment",
    "RunResult": "coordinator.simulation",
    "run_experiment": "coordinator.simulation",
    "resume_run": "coordinator.simulation",
    "run": "coordinator.simulation:run_experiment",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    try:
        target = _API[name]
    except KeyError:
        raise AttributeError(f"module 'coordinator' has no attribute {name!r}") from None
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute or name)
