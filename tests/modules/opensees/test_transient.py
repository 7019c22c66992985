"""OpenSees' own transient analysis (HHT, the interface DOFs imposed by imposedMotion, the record as UniformExcitation)
integrates a dynamic module's internal DOFs as the module's HHT-alpha of the assembled matrices does, the oracle
that matches one OpenSees model under AlphaOS (docs/dynamic_modules.md): the SSI study's soil with its mass."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hybridsim.coordinator.problems.ssi import cases
from hybridsim.modules.registry import build_module

DT, STEPS = 0.01, 40


def _run(integrator: str, substeps: int, amplitude: float = 1e-3, **changes: object) -> tuple[np.ndarray, np.ndarray]:
    """The interface force G of every trial (N) and the settled state's accelerations at the end (m/s^2), for
    the pre-test's probe from rest and then a smooth interface motion under a sine record."""
    ground = 2.0 * np.sin(3.0 * np.pi * DT * np.arange(2 * STEPS))
    config = cases.soil_module(cases.CASES["soil-mass-module"], "", ground)["config"]
    config["dynamic"].update(integrator=integrator, substeps=substeps, **changes)
    config["path_independent"] = integrator == "module" or "alpha" not in changes
    substructure = build_module("opensees", config, base_dir=cases.FOLDER).substructure
    substructure.open(DT)
    forces = [substructure.trial(DT, np.full(6, 1e-5), 0)]
    substructure.open(DT)
    for n in range(1, STEPS + 1):
        command = amplitude * (n * DT) * np.sin(3.0 * n * DT * np.arange(1, 7))
        forces.append(substructure.trial(n * DT, command, n))
        substructure.commit(n * DT, command, n)
    return np.array(forces), substructure.settled.a


@pytest.mark.parametrize("substeps", [1, 3])
def test_opensees_transient_analysis_equals_the_modules_integration(substeps: int) -> None:
    forces, accelerations = _run("opensees", substeps)
    oracle, oracle_accelerations = _run("module", substeps)
    difference = np.max(np.abs(forces - oracle)) / np.max(np.abs(oracle))
    internal = np.max(np.abs(accelerations - oracle_accelerations)) / np.max(np.abs(oracle_accelerations))
    print(f"{substeps} sub-steps: interface force {difference:.1e}, internal accelerations {internal:.1e}")
    assert np.max(np.abs(oracle_accelerations[6:])) > 1e-2
    assert difference < 1e-10 and internal < 1e-10


def test_a_yielding_models_worker_with_its_forked_trials_answers_as_the_modules_integration() -> None:
    """The path-dependent way (the model in a worker process, every trial in a fork of it, the interface force
    from OpenSees' dynamic reactions) on the elastic soil, alpha = 0: the oracle's figures again."""
    forces, accelerations = _run("opensees", 2, alpha=0.0)
    oracle, oracle_accelerations = _run("module", 2, alpha=0.0)
    difference = np.max(np.abs(forces - oracle)) / np.max(np.abs(oracle))
    internal = np.max(np.abs(accelerations - oracle_accelerations)) / np.max(np.abs(oracle_accelerations))
    print(f"worker, 2 sub-steps: interface force {difference:.1e}, internal accelerations {internal:.1e}")
    assert difference < 1e-10 and internal < 1e-10


def test_a_yielding_dynamic_module_with_another_alpha_than_0_is_refused_in_one_line() -> None:
    from hybridsim.wire.contract import ModuleError

    with pytest.raises(ModuleError, match=r"^opensees module: a yielding dynamic module integrates with alpha = 0 "
                                          r".*: set dynamic.alpha = 0 and integrator.alpha = 0, not -0.05$"):
        _run("opensees", 1, alpha=-0.05)


def _pimy(steps: range, checkpoint_at: int = 0, restored: dict | None = None) -> tuple[np.ndarray, dict | None]:
    """The yielding (PressureIndependMultiYield) soil with its mass as a dynamic module, alpha = 0, driven 10 times
    harder than :func:`_run`'s default: G over ``steps`` (from a ``restored`` checkpoint) and the checkpoint taken after
    ``checkpoint_at`` (JSON round trip, as a site's)."""
    ground = 2.0 * np.sin(3.0 * np.pi * DT * np.arange(2 * STEPS))
    config = cases.soil_module(cases.CASES["soil-mass-module-pimy"], "", ground)["config"]
    config["dynamic"]["ground_acceleration_dt"] = DT
    substructure = build_module("opensees", config, base_dir=cases.FOLDER).substructure
    substructure.open(DT)
    if restored is not None:
        substructure.load(restored)
    forces, saved = [], None
    for n in steps:
        command = 1e-2 * (n * DT) * np.sin(3.0 * n * DT * np.arange(1, 7))
        forces.append(substructure.trial(n * DT, command, n))
        substructure.commit(n * DT, command, n)
        if n == checkpoint_at:
            saved = json.loads(json.dumps(substructure.save()))
    return np.array(forces), saved


def test_a_yielding_dynamic_module_resumes_from_its_checkpoint_bit_for_bit() -> None:
    """The worker replays the settled steps into a fresh model: the forces after the restore equal the
    uninterrupted run's to the bit; the soil yields (its forces leave the elastic soil's)."""
    whole, saved = _pimy(range(1, 21), checkpoint_at=10)
    resumed, _ = _pimy(range(11, 21), restored=saved)
    assert np.array_equal(resumed, whole[10:])
    elastic = _run("module", 1, amplitude=1e-2, alpha=0.0)[0][1:21]
    off = np.max(np.abs(whole - elastic)) / np.max(np.abs(elastic))
    print(f"yielding soil: G off the elastic soil's by {off:.2f} of its peak")
    assert off > 0.05
