"""Force control at an OpenSees module: a column's axial DOF held at its gravity load, its top's lateral DOF driven
by the coordinator, against one OpenSees model with a gravity stage (``loadConst -time 0.0``) then a transient.

The oracle is OpenSees' own: the whole column (mass at the top) under HHT with alpha 1 (Newmark's average
acceleration) and Newton to NormDispIncr 1e-12, after the gravity stage; the hybrid integrates the one lateral DOF
with the coordinator's Newmark (iterated to equilibrium) and the module holds the axial force by its load pattern,
the top's rotation and axial displacement free inside it.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.opensees.monolithic import alpha_os_response

MODEL = Path(__file__).parent / "models" / "gravity_column.py"
LENGTH, E, A, I = 3.0, 200e9, 0.01, 1.0e-4
P = 1.5e6  # N: 27 % of the Euler load pi^2 E I / (4 L^2) = 5.48 MN; P-Delta softens the top by P/L = 0.5 MN/m
MASS, DT, RAYLEIGH_A = 2.0e4, 0.01, 0.3


def _record(tmp_path: Path) -> np.ndarray:
    """Two cycles of a 1.5 Hz sine, 1 m/s^2, then rest: 3 s at DT (m/s^2), written as the run's CSV."""
    t = np.arange(0.0, 3.0 + 1e-9, DT)
    a = np.where(t <= 4 / 3, 1.0 * np.sin(3 * np.pi * t), 0.0)
    np.savetxt(tmp_path / "pulse.csv", np.column_stack([t, a]), delimiter=",", header="time_s,accel_m_s2",
               comments="")
    return a


def _hybrid(tmp_path: Path, transformation: str, force: float, history: dict | None = None
            ) -> tuple[np.ndarray, h5py.File]:
    axial = {"name": "axial", "node": 2, "dof": 2, **({"force": -force} if history is None else {"history": history})}
    config = {"model": MODEL.name, "path_independent": True, "parameters": {"transformation": transformation},
              "control": [{"name": "x", "node": 2, "dof": 1}], "force_control": [axial]}
    table = {"experiment": {"name": f"column-{transformation}", "dt": DT},
             "structure": {"dofs": ["x"], "mass_diagonal": [MASS], "damping": {"rayleigh": [RAYLEIGH_A, 0.0]}, "influence": [1.0]},
             "ground_motion": {"file": str(tmp_path / "pulse.csv")},
             "integrator": {"kind": "newmark", "tolerance": 1e-12},
             "modules": [{"name": "column", "kind": "opensees", "config": config}],
             "output": {"file": str(tmp_path / f"{transformation}-{force}.h5")}}
    result = run_experiment(parse_experiment(table, base_dir=MODEL.parent))
    return result.displacement[:, 0], h5py.File(result.output, "r")


def _monolithic(ground: np.ndarray, transformation: str, gravity: float, added: list | None = None) -> np.ndarray:
    parameters = {"transformation": transformation, "top_mass": MASS, "gravity": gravity, "added": added}
    return alpha_os_response(MODEL, parameters, dt=DT,
                             ground_acceleration=ground, alpha=0.0, record=[(2, 1)], rayleigh=(RAYLEIGH_A, 0.0),
                             implicit=True, tolerance=1e-12)[:, 0]


@pytest.mark.parametrize("transformation", ["PDelta", "Corotational"])
def test_a_column_with_its_axial_force_held_equals_one_opensees_model_with_a_gravity_stage(
        tmp_path: Path, transformation: str) -> None:
    ground = _record(tmp_path)
    hybrid, h5 = _hybrid(tmp_path, transformation, P)
    with h5:
        record = h5["modules/column/records/force_control"][...]
    monolithic = _monolithic(ground, transformation, P)
    without_gravity = _monolithic(ground, transformation, 0.0)
    peak = np.abs(monolithic).max()
    max_rel_diff = np.abs(hybrid - monolithic).max() / peak
    print(f"{transformation}: peak {peak:.4e} m, max_rel_diff {max_rel_diff:.2e}, "
          f"without gravity {np.abs(without_gravity - monolithic).max() / peak:.2e}")
    assert max_rel_diff < 1e-6
    assert np.abs(without_gravity - monolithic).max() > 0.05 * peak  # the held axial force matters (P-Delta)
    # the axial DOF is free: at rest it reached the elastic shortening P L / (E A) under its held target
    assert record[0, 0] == pytest.approx(-P * LENGTH / (E * A), rel=1e-9)
    assert np.all(record[:, 1] == -P)
    assert record.shape[0] == hybrid.size


def test_a_dof_both_imposed_and_force_controlled_is_refused_in_one_line() -> None:
    from hybridsim.modules.opensees.config import parse_spec
    from hybridsim.wire.contract import ModuleError

    config = {"model": MODEL.name, "control": [{"name": "x", "node": 2, "dof": 1}],
              "force_control": [{"name": "axial", "node": 2, "dof": 1, "force": -P}]}
    with pytest.raises(ModuleError, match=r"\(2, 1\) is both a control DOF and in force_control; .*drop it from one"):
        parse_spec(config, MODEL.parent)


def test_an_axial_force_history_equals_opensees_with_a_load_pattern_over_the_transient(tmp_path: Path) -> None:
    """The axial target from P at t = 0 to 2P at t = 3 s (linear): the module's history at each command's time
    against the gravity stage then a Path-series load pattern (0 to P over the same 3 s) in one OpenSees model."""
    ground = _record(tmp_path)
    hybrid, h5 = _hybrid(tmp_path, "PDelta", P, {"time": [0.0, 3.0], "force": [-P, -2 * P]})
    with h5:
        record = h5["modules/column/records/force_control"][...]
    monolithic = _monolithic(ground, "PDelta", P, [[0.0, 3.0], [0.0, P]])
    constant = _monolithic(ground, "PDelta", P)
    peak = np.abs(monolithic).max()
    max_rel_diff = np.abs(hybrid - monolithic).max() / peak
    print(f"history: max_rel_diff {max_rel_diff:.2e}, against the constant load {np.abs(constant - monolithic).max() / peak:.2e}")
    assert max_rel_diff < 1e-6
    assert np.abs(constant - monolithic).max() > 0.05 * peak  # the growing load matters
    assert record[-1, 1] == pytest.approx(-2 * P, rel=1e-12) and record[0, 1] == -P


def test_a_force_history_of_a_path_dependent_model_or_with_times_out_of_order_is_refused_in_one_line() -> None:
    from hybridsim.modules.opensees.config import parse_spec
    from hybridsim.wire.contract import ModuleError

    axial = {"name": "axial", "node": 2, "dof": 2, "history": {"time": [0.0, 3.0], "force": [-P, -2 * P]}}
    config = {"model": MODEL.name, "control": [{"name": "x", "node": 2, "dof": 1}], "force_control": [axial]}
    with pytest.raises(ModuleError, match=r"a force_control history needs path_independent = true"):
        parse_spec(config, MODEL.parent)
    axial["history"] = {"time": [0.0, 3.0, 2.0], "force": [-P, -2 * P, -P]}
    with pytest.raises(ModuleError, match=r"force_control\[0\]\.history: give as many forces as times, the times "
                                          r"increasing from 0"):
        parse_spec({**config, "path_independent": True}, MODEL.parent)
