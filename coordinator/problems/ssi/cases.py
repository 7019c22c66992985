"""The soil-foundation-structure system: the soil in an openseespy process behind OpenSees' ``adapter`` element
(examples/ssi/soil_adapter.py), the footing and column as an ``opensees`` module in the coordinator, against
examples/ssi/ssi_model.py built whole under OpenSees' AlphaOS.  Coordinator DOFs: x, y of the three footing
nodes (massless) and the column top's x (the structure's mass); the footing's rotations and the top's y and
rotation stay inside the frame module."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.problems.bridge.cases import ALPHA, RECORD_FILE, adapter_peer, ended_on_die, free_port

FOLDER = Path(__file__).resolve().parents[3] / "examples" / "ssi"
MODEL = FOLDER / "ssi_model.py"
DOFS = ["footing1.x", "footing1.y", "footing2.x", "footing2.y", "footing3.x", "footing3.y", "top.x"]
RECORD = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2), (4, 1)]
DT = 0.01
DAMPING = 0.5   # 1/s, mass-proportional (on the top mass only)
MASS = 20000.0  # kg, as ssi_model.TOP_MASS


@dataclass
class Outcome:
    key: str
    duration: float
    hybrid: np.ndarray
    monolithic: np.ndarray
    wall_s: float

    @property
    def max_rel_diff(self) -> float:
        """max |hybrid - monolithic| / max |monolithic| of the column top's x"""
        return float(np.max(np.abs(self.hybrid[:, -1] - self.monolithic[:, -1])) / np.max(np.abs(self.monolithic[:, -1])))


def experiment_table(duration: float, adapter: str, output: Path) -> dict[str, Any]:
    return {
        "experiment": {"name": "ssi-elastic", "dt": DT, "duration": duration},
        "structure": {"dofs": DOFS, "mass_diagonal": [0.0] * 6 + [MASS], "damping": {"rayleigh": [DAMPING, 0.0]},
                      "influence_dofs": ["top.x"]},
        "ground_motion": {"file": RECORD_FILE},
        "integrator": {"kind": "alpha-os", "alpha": ALPHA},
        "modules": [
            {"name": "frame", "kind": "opensees",
             "config": {"model": str(MODEL), "parameters": {"part": "frame"}, "path_independent": True,
                        "control": [{"name": n, "node": node, "dof": dof} for n, (node, dof) in zip(DOFS, RECORD)]}},
            {"name": "soil", "kind": "openfresco", "address": adapter, "deadline_s": 60.0,
             "config": {"dofs": DOFS[:6], "server": "adapter"}},
        ],
        "output": {"file": str(output)},
    }


def run_case(duration: float) -> Outcome:
    from hybridsim.coordinator.experiment import parse_experiment
    from hybridsim.coordinator.simulation import run_experiment
    from hybridsim.modules.opensees.monolithic import alpha_os_response

    if duration <= 0:
        raise UsageError(f"--duration must be > 0 s, not {duration}")
    with tempfile.TemporaryDirectory(prefix="ssi-") as scratch:
        out = Path(scratch) / "ssi.h5"
        port = free_port()
        with adapter_peer(port, FOLDER / "soil_adapter.py") as peer:
            experiment = parse_experiment(experiment_table(duration, f"127.0.0.1:{port}", out), base_dir=FOLDER)
            start = time.perf_counter()
            result = run_experiment(experiment, output=out, overwrite=True)
            wall = time.perf_counter() - start
            ended_on_die(peer, "the soil")
        hybrid = result.displacement
    reference = alpha_os_response(MODEL, {"part": "whole", "mass": MASS}, dt=DT,
                                  ground_acceleration=experiment.motion.acceleration, alpha=ALPHA, record=RECORD,
                                  rayleigh=(DAMPING, 0.0))
    return Outcome("elastic", duration, hybrid, reference, wall)
