"""A linear chain of two dynamic `linear` modules (docs/dynamic_modules.md) against one OpenSees model under
OpenSees' own AlphaOS: the partition of alpha-OS is exact for a linear structure."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.problems.dynamic import chain
from hybridsim.coordinator.problems.dynamic.runs import ALPHA, AMPLITUDE, OMEGA_G, hybrid, one_model, sine_record
from hybridsim.coordinator.simulation import run_experiment

DT, DURATION = 0.01, 3.0


def test_two_dynamic_modules_equal_one_opensees_model_under_alphaos(tmp_path) -> None:
    x2, record = hybrid(tmp_path, ALPHA, 1, DT, DURATION)
    reference = one_model(record, DT)
    difference = np.max(np.abs(x2 - reference)) / np.max(np.abs(reference))
    print(f"chain, one step per coordinator step: max_rel_diff {difference:.2e} vs OpenSees AlphaOS")
    assert np.max(np.abs(reference)) > 1e-3
    assert difference < 1e-8


def test_sub_stepping_converges_to_the_closed_form_at_second_order(tmp_path) -> None:
    """The modules' internal DOFs at dt/4 (the interface by the quintic Hermite interpolation): not the one model's
    scheme any more, so against the continuous closed form (the modes of the whole): second order in dt, and
    nearer than one step per coordinator step at the same dt."""
    errors = {}
    for dt, substeps in ((0.01, 4), (0.005, 4), (0.005, 1)):
        x2, _ = hybrid(tmp_path, 0.0, substeps, dt, 1.0)
        exact = chain.closed_form(dt * np.arange(x2.size), AMPLITUDE, OMEGA_G)
        errors[dt, substeps] = np.max(np.abs(x2 - exact)) / np.max(np.abs(exact))
    print("chain vs closed form: " + ", ".join(f"dt {dt} m {m}: {e:.2e}" for (dt, m), e in errors.items()))
    assert 3.5 < errors[0.01, 4] / errors[0.005, 4] < 4.5
    assert errors[0.005, 4] < 0.6 * errors[0.005, 1]


def test_a_coordinator_with_another_alpha_is_refused_in_one_line(tmp_path) -> None:
    record_file, record = sine_record(tmp_path, DT, 0.1)
    table = chain.experiment_table(ALPHA, 1, record_file, record, DT, 0.1, str(tmp_path / "refused.h5"))
    table["integrator"]["alpha"] = -0.1
    with pytest.raises(UsageError, match=r"^module 'lower' integrates with alpha = -0.05, the coordinator with "
                                         r"-0.1: set integrator.alpha = -0.05 or the module's dynamic.alpha = -0.1$"):
        run_experiment(parse_experiment(table, base_dir=tmp_path), output=tmp_path / "refused.h5")


@pytest.mark.long
@pytest.mark.parametrize("substeps", [1, 4])
def test_the_chain_matches_the_closed_form_to_1e_8_with_and_without_sub_stepping(tmp_path, substeps) -> None:
    """Small enough steps (second order: 20,000 of dt = 2.5e-5 s over 0.5 s): the continuous closed form to 1e-8
    (measured 6.9e-9 with one step, 6.6e-9 with 4 sub-steps)."""
    dt = 2.5e-5
    x2, _ = hybrid(tmp_path, 0.0, substeps, dt, 0.5)
    exact = chain.closed_form(dt * np.arange(x2.size), AMPLITUDE, OMEGA_G)
    difference = np.max(np.abs(x2 - exact)) / np.max(np.abs(exact))
    print(f"chain vs closed form, dt {dt:g} s, {substeps} sub-steps: {difference:.2e}")
    assert difference < 1e-8


def test_a_module_with_another_record_is_refused_in_one_line(tmp_path) -> None:
    record_file, record = sine_record(tmp_path, DT, 0.5)
    table = chain.experiment_table(ALPHA, 1, record_file, record, DT, 0.5, str(tmp_path / "other.h5"))
    table["modules"][1]["config"]["dynamic"]["ground_acceleration"] = (0.5 * record).tolist()   # half the record
    with pytest.raises(UsageError, match=r"^module 'upper' excites its mass with another record than the "
                                         r"coordinator's \(a_g\(t = [0-9.]+ s\) = .* give it the coordinator's record"):
        run_experiment(parse_experiment(table, base_dir=tmp_path), output=tmp_path / "other.h5")


def test_matrices_of_another_size_than_the_dofs_and_internal_dofs_are_refused_naming_the_count() -> None:
    from hybridsim.modules.registry import build_module
    from hybridsim.wire.contract import ModuleError

    config = chain.modules(ALPHA, 1, np.zeros(3), DT)[1]["config"]          # [x2 | x3, x4]
    config["dynamic"]["internal"] = 1
    with pytest.raises(ModuleError, match=r"^linear module: with 1 DOFs and dynamic.internal = 1 the matrices are "
                                          r"2x2 \(the interface DOFs, then the internal ones\), stiffness has 3 rows: "
                                          r"set dynamic.internal = 2$"):
        build_module("linear", config)
