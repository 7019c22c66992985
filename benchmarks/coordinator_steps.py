"""Steps per second of the in-process coordinator on the reference problems (prints a table; --json).

    python benchmarks/coordinator_steps.py [--repeat 3] [--json]

Runs, side by side in one process: the maRTHS frame (29 DOFs, 1024 Hz, El Centro, 42168 steps) as one
linear module and split into three, and the five-story shear building (5 DOFs, 100 Hz, five modules),
all with alpha-OS; reports the best of ``--repeat`` runs of the integration loop (pre-test excluded).
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
from pathlib import Path

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.simulation import run_experiment

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CASES = {
    "maRTHS frame, 1 module": "frame_monolithic.toml",
    "maRTHS frame, 3 modules": "frame_three_linear.toml",
    "5-story building, 5 modules": "shear_building.toml",
}


def measure(repeat: int) -> dict[str, dict[str, float]]:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, file in CASES.items():
            experiment = load_experiment(EXAMPLES / file)
            runs = (run_experiment(experiment, output=Path(tmp) / "run.h5", overwrite=True) for _ in range(repeat))
            best = min((run.summary for run in runs), key=lambda s: s["loop_wall_s"])
            out[label] = {"dofs": len(experiment.dofs), "steps": best["steps"], "loop_wall_s": best["loop_wall_s"],
                          "steps_per_second": best["steps_per_second"],
                          "us_per_step": 1e6 * best["loop_wall_s"] / best["steps"],
                          "realtime_factor": best["simulated_s"] / best["loop_wall_s"]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.repeat)
    if args.json:
        print(json.dumps({"machine": platform.platform(), "python": platform.python_version(), "cases": figures}))
        return
    print(f"{'case':<30}{'DOFs':>6}{'steps':>8}{'steps/s':>10}{'us/step':>9}{'x real time':>13}")
    for label, f in figures.items():
        print(f"{label:<30}{f['dofs']:>6}{f['steps']:>8}{f['steps_per_second']:>10,.0f}{f['us_per_step']:>9.1f}"
              f"{f['realtime_factor']:>13.2f}")


if __name__ == "__main__":
    main()
