"""hybridsim's coordinator: load an experiment, run it, get the response arrays back.

    >>> import coordinator
    >>> exp = coordinator.load_experiment("examples/sdof.toml")
    >>> result = coordinator.run(exp)
    >>> result["x"]              # displacement history of DOF "x" (m)
"""

from coordinator.experiment import Experiment, ExperimentError, load_experiment, parse_experiment
from coordinator.simulation import RunResult, run_experiment

run = run_experiment

__all__ = ["Experiment", "ExperimentError", "RunResult", "load_experiment", "parse_experiment", "run",
           "run_experiment"]
