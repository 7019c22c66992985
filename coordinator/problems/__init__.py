"""The reference problems: the maRTHS benchmark, the implicit-RTHS study, the NARX study.

``EVALUATIONS`` maps an experiment's ``[evaluation] problem = "..."`` to the function that
computes that problem's criteria from a finished run (``evaluate(experiment, results_path)``).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

EVALUATIONS: dict[str, str] = {
    "marths": "hybridsim.coordinator.problems.marths.hybrid:evaluate",
}


def evaluate(experiment: Any, results: Path) -> dict[str, Any]:
    """The criteria of ``experiment``'s reference problem for the run stored in ``results``."""
    module, _, function = EVALUATIONS[experiment.evaluation["problem"]].partition(":")
    return getattr(importlib.import_module(module), function)(experiment, results)
