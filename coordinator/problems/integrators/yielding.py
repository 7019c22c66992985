"""Each scheme against OpenSees' own implementation on the five-story building with yielding stories.

The building of examples/shear_building.toml (El Centro at 0.2 g) with every story a bilinear spring
(kinematic hardening, ``spring`` modules; Steel01 in OpenSees, its b = 2 %) yielding at 1 cm, run at dt
and dt/2 through the coordinator and in OpenSees (``opensees.INTEGRATORS``).  Where a scheme weights
the restoring force between steps, OpenSees evaluates its elements at the weighted displacement
(1 - a_f) d_n + a_f d_{n+1} while a hybrid test commands d_{n+1} and weights the forces it measures:
the same on a linear spring, different by the yielding between the two points on a nonlinear one, so the
difference shrinks with dt.  Schemes without a weight (central difference, Newmark explicit, Newmark
iterated to convergence) evaluate the same point: there only rounding and the iterations' tolerance differ.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hybridsim.coordinator.problems.integrators.opensees import INTEGRATORS, STORY_STIFFNESS, HARDENING, shear_building
from hybridsim.coordinator.problems.integrators.schemes import SCHEMES

YIELD_DISPLACEMENT = 0.01
"""m: every story yields at 1 cm of drift (the linear building's first story drifts about 3 cm)"""
DT = 0.01
"""s: the example's step; the study also runs dt/2"""


@dataclass
class Yielding:
    scheme: str
    dt: tuple[float, float]
    difference: tuple[float, float]
    """max |ours - OpenSees| / max |OpenSees| of the floor displacements at dt and dt/2"""
    peak_drift: float
    """m: the first story's largest drift (OpenSees, dt): above the yield displacement"""
    roof: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    """roof displacement, ours and OpenSees', at dt and at dt/2"""


def run_pair(folder: Path, key: str, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Floor displacements (steps+1 x 5) through the coordinator and in OpenSees at ``dt``."""
    from hybridsim.coordinator.experiment import parse_experiment
    from hybridsim.coordinator.model import rayleigh_coefficients
    from hybridsim.coordinator.simulation import run_experiment

    omegas, zeta = (5.6927, 26.1946), 0.02
    modules = [{"name": f"story{story}", "kind": "spring",
                "config": {"law": "bilinear", "dofs": [f"x{story}"] if story == 1 else [f"x{story - 1}", f"x{story}"],
                           "stiffness": STORY_STIFFNESS, "yield_displacement": YIELD_DISPLACEMENT,
                           "hardening_ratio": HARDENING}} for story in range(1, 6)]
    experiment = parse_experiment({
        "experiment": {"name": "yielding", "dt": dt},
        "structure": {"dofs": [f"x{i}" for i in range(1, 6)], "mass_diagonal": [100.0] * 5, "influence": [1.0] * 5,
                      "damping": {"rayleigh_omega": list(omegas), "zeta": zeta}},
        "ground_motion": {"file": "hybridsim:marths/ground_motion_elcentro.csv", "pga": 1.96133},
        "integrator": SCHEMES[key].table, "modules": modules,
        "output": {"file": str(folder / f"{key}-{dt:g}.h5")}}, base_dir=folder)
    ours = run_experiment(experiment).displacement
    integrator, algorithm, test = INTEGRATORS[key]
    motion = experiment.motion
    theirs = shear_building(motion.dt, motion.acceleration, dt, experiment.steps, integrator,
                            rayleigh_coefficients(*omegas, zeta), algorithm=algorithm, test=test,
                            yield_force=STORY_STIFFNESS * YIELD_DISPLACEMENT)
    return ours, theirs


def compare(keys: list[str]) -> list[Yielding]:
    """Each scheme of ``keys`` that OpenSees implements, at DT and DT/2."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for key in (k for k in keys if k in INTEGRATORS):
            pairs = [run_pair(Path(tmp), key, dt) for dt in (DT, DT / 2)]
            differences = tuple(float(np.max(np.abs(a - b)) / np.max(np.abs(b))) for a, b in pairs)
            drift = float(np.max(np.abs(pairs[0][1][:, 0])))
            roof = tuple(x[:, 4] for pair in pairs for x in pair)
            out.append(Yielding(key, (DT, DT / 2), differences, drift, roof))  # type: ignore[arg-type]
    return out
