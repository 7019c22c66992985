"""Write the design-card topology of the maRTHS benchmark as an experiment's module files.

Run from anywhere: ``python examples/marths/make_marths.py``.  It writes, next to itself:

- ``numerical_K.csv``, ``numerical_M.csv``, ``numerical_C.csv``: the benchmark's numerical
  substructure as published (SPEC §5.2: the reference frame minus the ideal physical portal on
  DOFs 27, 29, 21), in the DOF order of ``examples/frame_monolithic.toml``;
- ``numerical.toml``: the `linear` module of that substructure's stiffness;
- ``site.json``: the `experimental` module: the coupler, one RLS-AC compensator per actuator with
  the shipped initial parameters, the 5-DOF feedback-force frame, and a nominal `plant` daemon
  (noise seed 123) that the site starts itself; its records (per control sample: target, command, measured
  strokes) travel to the coordinator at the end of the run and land in the results file
  (``/modules/lab/records/``), never here.

and, for the docker-compose emulation (one container per site), ``deploy/marths/plant.json`` (the
plant as a site of its own) and ``deploy/marths/lab.json`` (the same experimental site, its backend
the plant service at ``plant:50051``, its record in the shared ``results`` volume).

The matrices and tables come from hybridsim.coordinator.problems (the benchmark's own definitions), so the
coordinator-driven run and ``hybridsim benchmark marths`` use the same physics.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hybridsim.coordinator.problems.marths import parts
from hybridsim.coordinator.problems.marths.loop import NOMINAL_NOISE_SEED
from hybridsim.coordinator.problems.marths.structure import numerical_substructure

HERE = Path(__file__).resolve().parent
DEPLOY = HERE.parents[1] / "deploy" / "marths"
FRAME = HERE.parent / "marths_frame" / "frame.toml"
SITE_DOFS = ["floor1_x", "J7_ry", "J6_ry"]  # SAP equations 27, 21, 29 in examples/marths_frame's names


def main() -> None:
    import tomllib

    frame = tomllib.loads(FRAME.read_text())
    numerical = numerical_substructure()
    for name, matrix in (("K", numerical.stiffness), ("M", numerical.mass), ("C", numerical.damping)):
        np.savetxt(HERE / f"numerical_{name}.csv", matrix, delimiter=",", fmt="%.17g")
    (HERE / "numerical.toml").write_text(
        "# the maRTHS numerical substructure (SPEC 5.2), written by make_marths.py; N/m, N/rad, N*m/rad\n"
        f"dofs = {json.dumps(frame['dofs'])}\nkinds = {json.dumps(frame['kinds'])}\n"
        'stiffness_file = "numerical_K.csv"\n')
    plant = parts.plant_config("nominal", None, noise=True, noise_seed=NOMINAL_NOISE_SEED)
    site = parts.site_config("rls", backend={"daemon": plant})
    site["dofs"] = SITE_DOFS
    (HERE / "site.json").write_text(json.dumps(site, indent=1) + "\n")
    DEPLOY.mkdir(exist_ok=True)
    (DEPLOY / "plant.json").write_text(json.dumps(plant, indent=1) + "\n")
    # the compose lab also keeps its own record (as a lab keeps its log), in its lab-record volume mounted in
    # the folder of lab.json (a site writes only inside its configuration's folder)
    lab = dict(site, backend={"address": "plant:50051", "deadline_s": 30.0}, record="record/marths_site.h5")
    (DEPLOY / "lab.json").write_text(json.dumps(lab, indent=1) + "\n")
    print(f"wrote the numerical substructure and the site ({', '.join(SITE_DOFS)}) to {HERE}")


if __name__ == "__main__":
    main()
