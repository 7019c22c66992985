"""A large plane frame as a hybrid experiment of sparse files, and the same frame under OpenSees beside it.

:func:`write` puts a frame of :mod:`hybridsim.modules.opensees.models.frame2d` into a folder as an experiment
file: the structure's lumped mass as ``mass.npz`` (which makes the structure sparse), the stiffness of the
stories up to ``split`` as a linear module's ``lower.npz`` and of those above as ``upper.mtx`` (Matrix
Market), Rayleigh damping C = a M + b K_I, and a 2 Hz sine of ground acceleration (3 m/s^2) sampled at dt.
:func:`compare` runs it (pre-test, sparse alpha-OS or KR-alpha over the two modules) and the whole frame as
one OpenSees model under OpenSees' own scheme, and gives the largest difference over the peak.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from hybridsim.modules.opensees.models.frame2d import Frame, matrices, opensees_response

DT, RAYLEIGH = 1.0 / 1024.0, (0.2, 0.002)
SCHEMES = {"alpha-os": ({"alpha": -0.05}, ("AlphaOS", 0.95), ("Linear", "-initial", "-factorOnce")),
           "kr-alpha": ({"rho_inf": 0.5}, ("KRAlphaExplicit", 0.5), ("Linear",))}
"""the coordinator's scheme: its options, OpenSees' integrator and algorithm"""


@dataclass(frozen=True)
class Comparison:
    ndof: int
    steps: int
    difference: float
    """max |hybrid - OpenSees| / max |OpenSees| over the recorded DOFs"""
    peak: float
    """max |OpenSees| (m, rad)"""
    run_s: float
    """wall time of the hybrid run, pre-test and results file included (s)"""


def ground(steps: int) -> np.ndarray:
    """The record: 3 m/s^2 at 2 Hz, one sample per step from t = 0."""
    return 3.0 * np.sin(2 * np.pi * 2.0 * np.arange(steps) * DT)


def _module(frame: Frame, stiffness: sp.csr_matrix, file: Path, names: list[str]) -> dict[str, object]:
    """A linear module's table over the DOFs its stiffness touches, its K written to ``file``."""
    touched = np.flatnonzero(stiffness.getnnz(axis=1))
    block = stiffness[touched][:, touched]
    if file.suffix == ".mtx":
        scipy.io.mmwrite(file, block)
    else:
        sp.save_npz(file, block)
    dofs = [names[i] for i in touched]
    return {"dofs": dofs, "kinds": ["rotation" if d.endswith("r") else "translation" for d in dofs],
            "stiffness_file": file.name}


def write(folder: Path, frame: Frame, split: int, steps: int, scheme: str = "alpha-os") -> Path:
    """The experiment file of ``frame`` split at story ``split`` into two sparse linear modules."""
    folder.mkdir(parents=True, exist_ok=True)
    names = frame.dof_names()
    _, mass = matrices(frame)
    sp.save_npz(folder / "mass.npz", mass)
    record = ground(steps)
    np.savetxt(folder / "ground.csv", np.column_stack([np.arange(steps) * DT, record]), delimiter=",")
    modules = [_module(frame, matrices(frame, part, split)[0], folder / file, names)
               for part, file in (("lower", "lower.npz"), ("upper", "upper.mtx"))]
    options = ", ".join(f"{k} = {v}" for k, v in SCHEMES[scheme][0].items())
    text = [f'[experiment]\nname = "frame_{frame.ndof}"\ndt = {DT!r}\nduration = {(steps - 1) * DT!r}\n',
            f"[structure]\ndofs = {json.dumps(names)}\nmass_file = \"mass.npz\"",
            f"damping = {{ rayleigh = [{RAYLEIGH[0]}, {RAYLEIGH[1]}] }}",
            f"influence_dofs = {json.dumps(names[0::3])}\n",
            '[ground_motion]\nfile = "ground.csv"\n', f'[integrator]\nkind = "{scheme}"\n{options}\n']
    for name, table in zip(("lower", "upper"), modules):
        text.append(f'[[modules]]\nname = "{name}"\nkind = "linear"\n[modules.config]\n'
                    + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items()))
    path = folder / "frame.toml"
    path.write_text("\n".join(text))
    return path


def compare(folder: Path, frame: Frame, split: int, steps: int, scheme: str = "alpha-os") -> Comparison:
    """Run the experiment of :func:`write` and the whole frame under OpenSees; the difference at every 7th DOF."""
    import time

    from hybridsim.coordinator.experiment import load_experiment
    from hybridsim.coordinator.simulation import run_experiment

    experiment = load_experiment(write(folder, frame, split, steps, scheme))
    begin = time.perf_counter()
    result = run_experiment(experiment, output=folder / "frame.h5")
    run_s = time.perf_counter() - begin
    record = list(range(0, frame.ndof, 7)) + [frame.ndof - 3]
    _, integrator, algorithm = SCHEMES[scheme]
    reference = opensees_response(frame, integrator, ground(steps), DT, RAYLEIGH, record, algorithm=algorithm)
    ours = np.asarray(result.displacement)[:, record]
    peak = float(np.max(np.abs(reference)))
    return Comparison(frame.ndof, steps, float(np.max(np.abs(ours - reference)) / peak), peak, run_s)
