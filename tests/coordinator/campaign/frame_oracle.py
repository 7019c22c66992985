"""Oracles of the IDA frame (examples/ida_frame): the whole frame under OpenSees' own AlphaOS (the monolithic
model), its first period from OpenSees' eigen solver, Sa from SciPy's lsim of the 5 %-damped oscillator under
the record read from its file with numpy (not through hybridsim's reader)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from scipy import signal

from hybridsim.coordinator.campaign.measures import FIRST_PERIOD
from hybridsim.modules.opensees.monolithic import alpha_os_response

FOLDER = Path(__file__).resolve().parents[3] / "examples" / "ida_frame"
SHIPPED = Path(__file__).resolve().parents[3] / "coordinator" / "data"
FLOORS, DT, H, G = ["floor1.x", "floor2.x", "floor3.x"], 0.005, 3.5, 9.80665
REPORT = ["--sa-period", FIRST_PERIOD, "--drift", *FLOORS, "--storey-height", str(H)]
MASS_DAMPING = 0.2714  # 1/s: frame.toml's rayleigh = [a, 0]


def _frame():
    spec = importlib.util.spec_from_file_location("steel_frame", FOLDER / "steel_frame.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def first_period() -> float:
    """T1 (s) of the frame (its fibre sections' initial stiffness)."""
    from hybridsim.modules.opensees import domain
    from hybridsim.modules.opensees.lazy import ops

    with domain.held("the frame's periods"):
        _frame().build(ops)
        return float(2 * np.pi / np.sqrt(ops.eigen("-fullGenLapack", 1)[0]))


def ground(record: str, scale: float, duration: float) -> np.ndarray:
    """The record (a CSV of examples/ida_frame or hybridsim:NAME) scaled, at DT (linear between its samples)."""
    path = SHIPPED / record.removeprefix("hybridsim:") if record.startswith("hybridsim:") else FOLDER / record
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    t = DT * np.arange(int(round(duration / DT)) + 1)
    return scale * np.interp(t, data[:, 0], data[:, 1])


def sa(acceleration: np.ndarray, period: float) -> float:
    """Sa(T, 5 %) in g."""
    omega = 2 * np.pi / period
    _, u, _ = signal.lsim(([-1.0], [1.0, 2 * 0.05 * omega, omega ** 2]), acceleration, DT * np.arange(acceleration.size))
    return float(omega ** 2 * np.max(np.abs(u)) / G)


def drift(acceleration: np.ndarray, elastic: bool = False) -> float:
    """The monolithic frame's peak interstorey drift ratio (``elastic``: its members elastic, same E, A, I)."""
    floors = alpha_os_response(FOLDER / "steel_frame.py", {"elastic": elastic}, dt=DT, ground_acceleration=acceleration,
                               alpha=-0.05, record=[(3, 1), (5, 1), (7, 1)], rayleigh=(MASS_DAMPING, 0.0))
    return float(np.max(np.abs(np.diff(np.column_stack([np.zeros(len(floors)), floors]), axis=1))) / H)
