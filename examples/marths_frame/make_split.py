"""Write the maRTHS reference frame (29 DOFs, SAP2000 matrices) as linear-module stiffness files.

Run from this folder: ``python make_split.py``.  It writes
``K_full.csv`` (the whole frame) and a story-by-story additive split
K = K_story1 + K_story2 + K_story3:

- story1: the block of the base rotations and the first-floor joints;
- story2: the first-to-second-floor couplings plus the second-floor block;
- story3: the second-to-third-floor couplings plus the third-floor block.

The split is exact because no member spans two stories (checked below), so
the three linear modules together carry exactly the frame's stiffness.  Each
module gets a site configuration (``story1.toml`` ..., and ``frame.toml`` for
the whole frame) usable in an experiment or by ``hybridsim site linear``.
The DOF names follow the SAP2000 joint table: ``floorN_x`` for the
rigid-diaphragm lateral DOFs, ``J<joint>_z`` and ``J<joint>_ry`` otherwise.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "coordinator" / "data" / "marths"
FLOOR_OF_JOINT = {2: 0, 3: 0, **{j: 1 for j in range(5, 9)}, **{j: 2 for j in range(9, 13)},
                  **{j: 3 for j in range(13, 17)}}
LATERAL = {27: "floor1_x", 26: "floor2_x", 13: "floor3_x"}


def dof_table() -> tuple[list[str], list[int]]:
    """Names (by 0-based equation number) and the floor (0 = base) of each of the 29 DOFs."""
    names, floors = [""] * 29, [0] * 29
    with open(DATA / "joint_dof.csv") as f:
        for row in csv.DictReader(f):
            joint = int(row["Joint"])
            for column, suffix in (("Ux", "x"), ("Uz", "z"), ("Ry", "ry")):
                eq = int(row[column])
                if eq:
                    names[eq - 1] = LATERAL.get(eq, f"J{joint}_{suffix}")
                    floors[eq - 1] = FLOOR_OF_JOINT[joint]
    return names, floors


def split(stiffness: np.ndarray, floors: list[int]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The three story modules as (global indices, stiffness block)."""
    floor = np.array(floors)
    at = {k: np.flatnonzero(floor == k) for k in range(4)}
    assert not np.any(stiffness[np.ix_(at[0], np.r_[at[2], at[3]])]), "a member spans the base and floor 2"
    assert not np.any(stiffness[np.ix_(at[1], at[3])]), "a member spans floors 1 and 3"
    modules = {"story1": np.r_[at[0], at[1]]}
    block = {"story1": stiffness[np.ix_(modules["story1"], modules["story1"])]}
    for k in (2, 3):
        index = np.r_[at[k - 1], at[k]]
        part = stiffness[np.ix_(index, index)].copy()
        lower = np.arange(at[k - 1].size)
        part[np.ix_(lower, lower)] = 0.0  # the lower floor's own block belongs to the story below
        modules[f"story{k}"], block[f"story{k}"] = index, part
    return {name: (modules[name], block[name]) for name in modules}


def write_module_config(path: Path, names: list[str], stiffness_file: str) -> None:
    kinds = ["rotation" if n.endswith("_ry") else "translation" for n in names]
    path.write_text(
        f"# linear module written by make_split.py; stiffness in N/m, N/rad, N*m/rad\n"
        f"dofs = {json.dumps(names)}\n"
        f"kinds = {json.dumps(kinds)}\n"
        f"stiffness_file = \"{stiffness_file}\"\n")


def main() -> None:
    here = Path(__file__).resolve().parent
    stiffness = np.loadtxt(DATA / "K_matrix.csv", delimiter=",")
    names, floors = dof_table()
    np.savetxt(here / "K_full.csv", stiffness, delimiter=",", fmt="%.17g")
    write_module_config(here / "frame.toml", names, "K_full.csv")
    total = np.zeros_like(stiffness)
    for name, (index, block) in split(stiffness, floors).items():
        np.savetxt(here / f"K_{name}.csv", block, delimiter=",", fmt="%.17g")
        write_module_config(here / f"{name}.toml", [names[i] for i in index], f"K_{name}.csv")
        total[np.ix_(index, index)] += block
    assert np.array_equal(total, stiffness), "the split does not add up to the frame"
    print(f"structure.dofs = {json.dumps(names)}")


if __name__ == "__main__":
    main()
