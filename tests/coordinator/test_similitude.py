"""A scaled specimen gives the prototype's response: the same experiment at scale 1 and at length 1/2, force 1/4.

The scaled specimens are derived by hand from similitude (Harris & Sabnis 1999, ch. 2), not from the code
under test: a translation scales by lambda_L, a rotation by 1, a force by lambda_F, a moment by
lambda_F lambda_L, so a stiffness entry K_ij by f_i / s_j (f: force factor, s: displacement factor), a yield
displacement by lambda_L.
"""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment

LENGTH, FORCE = 0.5, 0.25
K_PROTOTYPE = [[2.0e6, -3.0e5], [-3.0e5, 4.0e5]]  # x (N/m), theta (N*m/rad), coupling N/rad and N*m/m
SPRING = {"law": "bilinear", "stiffness": 5.0e5, "yield_displacement": 0.01, "hardening_ratio": 0.05}


def _record(tmp_path: Path) -> Path:
    """Two cycles of a 2 Hz sine ground acceleration, 6 m/s^2, then 1 s of rest (m/s^2)."""
    t = np.arange(0.0, 2.0 + 1e-9, 0.005)
    path = tmp_path / "pulse.csv"
    np.savetxt(path, np.column_stack([t, np.where(t <= 1.0, 6.0 * np.sin(4 * np.pi * t), 0.0)]), delimiter=",",
               header="time_s,accel_m_s2", comments="")
    return path


def _experiment(tmp_path: Path, name: str, modules: list[dict]) -> dict:
    return {
        "experiment": {"name": name, "dt": 0.005},
        "structure": {"dofs": ["x", "theta", "x2"], "mass_diagonal": [2.0e3, 50.0, 2.0e3],
                      "damping": {"rayleigh": [0.5, 0.0]}, "influence": [1.0, 0.0, 1.0]},
        "ground_motion": {"file": str(_record(tmp_path))},
        "integrator": {"kind": "alpha-os", "alpha": -0.05},
        "modules": modules,
        "output": {"file": str(tmp_path / f"{name}.h5")},
    }


def _column(stiffness: list[list[float]], scale: dict | None) -> dict:
    module = {"name": "column", "kind": "linear",
              "config": {"dofs": ["x", "theta"], "kinds": ["translation", "rotation"], "stiffness": stiffness}}
    return module if scale is None else {**module, "scale": scale}


def _site(spring: dict, scale: dict | None) -> dict:
    """An experimental site (setup none, two ideal actuators) over a virtual lab whose specimen is a bilinear
    spring from x to x2 (no load-cell noise: the comparison is to round-off)."""
    config = {"dt": 0.005, "setup": {"kind": "none", "dofs": ["x", "x2"]}, "actuators": [{}, {}],
              "backend": {"plant": {"dt": 0.005, "dofs": ["floor1", "floor2"],
                                    "actuators": [{"model": "ideal"}, {"model": "ideal"}],
                                    "specimen": {"kind": "spring", **spring}}}}
    module = {"name": "storey", "kind": "experimental", "config": config}
    return module if scale is None else {**module, "scale": scale}


def _run(tmp_path: Path, name: str, modules: list[dict]):
    return run_experiment(parse_experiment(_experiment(tmp_path, name, modules), base_dir=tmp_path))


def test_a_half_length_quarter_force_specimen_gives_the_prototype_response(tmp_path: Path) -> None:
    s = np.array([LENGTH, 1.0])  # displacement factors: x, theta
    f = np.array([FORCE, FORCE * LENGTH])  # force factors: force on x, moment on theta
    k_specimen = (np.array(K_PROTOTYPE) * f[:, None] / s[None, :]).tolist()
    spring_specimen = {**SPRING, "stiffness": SPRING["stiffness"] * FORCE / LENGTH,
                       "yield_displacement": SPRING["yield_displacement"] * LENGTH}
    scale = {"length": LENGTH, "force": FORCE}
    slowed = {**scale, "time": 2.0}  # the lab runs twice as long: 2 control samples per step of its 5 ms
    prototype = _run(tmp_path, "prototype", [_column(K_PROTOTYPE, None), _site(SPRING, None)])
    scaled = _run(tmp_path, "scaled", [_column(k_specimen, scale), _site(spring_specimen, slowed)])
    peak = np.abs(prototype.displacement).max(axis=0)
    assert peak[2] > 2 * SPRING["yield_displacement"]  # the storey yields: the scaled yield point is exercised
    diff = np.abs(scaled.displacement - prototype.displacement).max(axis=0) / peak
    assert diff.max() < 1e-12, diff
    force_diff = np.abs(scaled.restoring_force - prototype.restoring_force).max() / np.abs(
        prototype.restoring_force).max()
    assert force_diff < 1e-12
    with h5py.File(tmp_path / "scaled.h5", "r") as h5:
        specimen = h5["modules/column/records/specimen"][...]
        at_prototype = np.hstack([h5["modules/column/displacement"][...], h5["modules/column/force"][...]])
        descriptions = json.loads(h5.attrs["module_descriptions"])
        lab_time = h5["modules/storey/records/sample_time"][-1, 0]
        strokes = h5["modules/storey/records/measured_strokes"][-1]  # mm, at the specimen's scale
        storey = h5["modules/storey/displacement"][-1]
    assert lab_time == pytest.approx(2.0 * prototype.time[-1], abs=1e-9)  # the lab's clock ran at time scale 2
    assert np.allclose(strokes, 1e3 * LENGTH * storey, rtol=1e-12, atol=0)
    # the specimen's own scale: x by lambda_L, theta by 1, force by lambda_F, moment by lambda_F lambda_L
    assert specimen.shape == at_prototype.shape
    assert np.allclose(specimen, at_prototype * np.concatenate([s, f]), rtol=1e-15, atol=0)
    assert json.loads(descriptions["column"]["info"]["scale"]) == {"length": LENGTH, "force": FORCE, "time": 1.0}


def test_a_scale_key_out_of_range_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"modules\[0\]\.scale\.length.*> 0"):
        parse_experiment(_experiment(tmp_path, "bad", [_column(K_PROTOTYPE, {"length": 0.0})]), base_dir=tmp_path)
    with pytest.raises(UsageError, match=r"unknown key modules\[0\]\.scale\.size; allowed: force, length, time"):
        parse_experiment(_experiment(tmp_path, "bad", [_column(K_PROTOTYPE, {"size": 0.5})]), base_dir=tmp_path)


def test_a_scaled_run_stopped_and_resumed_ends_as_the_uninterrupted_one(tmp_path: Path) -> None:
    """The checkpoint of a scaled module carries the specimen record's row count with the module's own state: a
    resume at the checkpoint ends bit for bit, its specimen record whole."""
    from hybridsim.coordinator.control import RunControl
    from hybridsim.coordinator.errors import RunStopped
    from hybridsim.coordinator.simulation import resume_run

    spring = {"name": "column", "kind": "spring", "scale": {"length": LENGTH, "force": FORCE},
              "config": {"dofs": ["x"], **SPRING, "stiffness": SPRING["stiffness"] * FORCE / LENGTH,
                         "yield_displacement": SPRING["yield_displacement"] * LENGTH}}

    def table(name: str) -> dict:
        t = _experiment(tmp_path, name, [spring])
        t["structure"] = {"dofs": ["x"], "mass_diagonal": [2.0e3], "influence": [1.0]}
        t["output"]["checkpoint_every"] = 100
        return t

    whole = run_experiment(parse_experiment(table("whole"), base_dir=tmp_path))
    control = RunControl()

    def listener(n, _arrays):
        if n == 250:
            control.abort("coordinator lost")

    with pytest.raises(RunStopped):
        run_experiment(parse_experiment(table("broken"), base_dir=tmp_path), control=control, listeners=[listener])
    resumed = resume_run(tmp_path / "broken.h5")
    assert np.array_equal(resumed.displacement, whole.displacement)
    with h5py.File(tmp_path / "broken.h5", "r") as a, h5py.File(tmp_path / "whole.h5", "r") as b:
        assert np.array_equal(a["modules/column/records/specimen"][...], b["modules/column/records/specimen"][...])
