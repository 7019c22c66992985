"""The chain's runs: the hybrid (the coordinator and two dynamic `linear` modules, a real run), one OpenSees model
under OpenSees' AlphaOS, and the free decay after a one-sample pulse (docs/dynamic_modules.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hybridsim.coordinator.problems.dynamic import chain

ALPHA = -0.05
OMEGA_G, AMPLITUDE = 2 * np.pi * 1.5, 2.0     # rad/s, m/s^2: a_g = A sin(Omega t)


def sine_record(folder: Path, dt: float, duration: float) -> tuple[str, np.ndarray]:
    """a_g = A sin(Omega t) sampled at dt, as a CSV file in ``folder`` (its path) and as samples (m/s^2)."""
    t = dt * np.arange(round(duration / dt) + 1)
    values = AMPLITUDE * np.sin(OMEGA_G * t)
    path = folder / "sine.csv"
    np.savetxt(path, np.column_stack([t, values]), delimiter=",", header="time, acceleration", comments="")
    return str(path), values


def _run(table: dict, folder: Path, name: str) -> np.ndarray:
    """x2 (m) of a run of the experiment ``table`` (results in ``folder``)."""
    from hybridsim.coordinator.experiment import parse_experiment
    from hybridsim.coordinator.simulation import run_experiment

    run = run_experiment(parse_experiment(table, base_dir=folder), output=folder / f"{name}.h5")
    return run.displacement[:, 0]


def hybrid(folder: Path, alpha: float, substeps: int, dt: float, duration: float) -> tuple[np.ndarray, np.ndarray]:
    """x2 (m) of the chain under the sine, and the record (m/s^2)."""
    record_file, record = sine_record(folder, dt, duration)
    name = f"chain-{alpha}-{substeps}-{dt}-{duration}"
    table = chain.experiment_table(alpha, substeps, record_file, record, dt, duration, str(folder / f"{name}.h5"))
    return _run(table, folder, name), record


def one_model(record: np.ndarray, dt: float, alpha: float = ALPHA, damped: bool = True) -> np.ndarray:
    """x2 (m) of the whole chain as one OpenSees model under OpenSees' AlphaOS (``Linear -initial``)."""
    from hybridsim.modules.opensees.monolithic import alpha_os_response

    return alpha_os_response(Path(chain.__file__), {}, dt=dt, ground_acceleration=record, alpha=alpha,
                             record=[(2, 1)], rayleigh=(chain.RAYLEIGH if damped else 0.0, 0.0))[:, 0]


def pulse(steps: int) -> np.ndarray:
    """A one-sample ground pulse of 1 m/s^2 at the first step."""
    record = np.zeros(steps + 1)
    record[1] = 1.0
    return record


def free_decay(folder: Path, dt: float, substeps: int, steps: int = 60) -> np.ndarray:
    """|x2| (m) after :func:`pulse`, the chain undamped."""
    record = pulse(steps)
    path = folder / f"pulse-{dt}-{substeps}-{steps}.csv"
    np.savetxt(path, np.column_stack([dt * np.arange(steps + 1), record]), delimiter=",")
    name = f"pulse-{dt}-{substeps}-{steps}"
    table = chain.experiment_table(ALPHA, substeps, str(path), record, dt, steps * dt, str(folder / f"{name}.h5"))
    table["structure"]["damping"] = {"rayleigh": [0.0, 0.0]}
    for module in table["modules"]:
        module["config"].pop("damping")
    return np.abs(_run(table, folder, name))


def radius(decay: np.ndarray, first: int, last: int) -> float:
    """The spectral radius a free decay shows: (max over [last, last+10) / max over [first, first+10))^(1/(last-first))."""
    return float((np.max(decay[last:last + 10]) / np.max(decay[first:first + 10])) ** (1 / (last - first)))
