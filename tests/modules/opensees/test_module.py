"""The OpenSees module against closed forms: beam stiffness, the Steel01 bilinear law, trial/commit.

Every expected number is a closed form (Euler-Bernoulli column stiffness, the
kinematic-hardening bilinear law of Steel01 without isotropic hardening, the
equilibrium of a two-spring chain), never an output of the module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from hybridsim.wire.contract import Command, ModuleError, Session, StepRefused
from hybridsim.modules.opensees import OpenSeesModule
from hybridsim.modules.registry import build_module

MODELS = Path(__file__).parent / "models"
E, A, I, L = 200e9, 1.0774e-3, 1.0489e-6, 0.635
FY, E0, B = 100.0, 1000.0, 0.1
EPS_Y = FY / E0


def steel01_bilinear(targets: list[float], fy: float = FY, e0: float = E0, b: float = B) -> list[float]:
    """Steel01 without isotropic hardening: elastic e0 between the lines +-fy(1-b) + b e0 u."""
    force, previous, out = 0.0, 0.0, []
    for u in targets:
        trial = force + e0 * (u - previous)
        force = min(max(trial, -fy * (1 - b) + b * e0 * u), fy * (1 - b) + b * e0 * u)
        previous = u
        out.append(force)
    return out


@pytest.fixture
def make() -> Iterator:
    """Build OpenSees modules from config tables; close them after the test (one domain per process)."""
    built: list[OpenSeesModule] = []

    def _make(model: str, control: list[dict], dt: float = 0.01, **table) -> OpenSeesModule:
        module = OpenSeesModule.from_config({"model": model, "control": control, **table}, base_dir=MODELS)
        built.append(module)
        module.open(Session(dt=dt, dof_names=module.describe().dof_names))
        return module

    yield _make
    for module in built:
        module.close()


def step(module: OpenSeesModule, n: int, d: list[float], commit: bool = True) -> np.ndarray:
    module.propose(n, Command(time=0.01 * n, displacement=np.array(d, float)))
    result = module.execute(n)
    if commit:
        module.commit(n)
    return result.force


TOP = [{"name": "x", "node": 2, "dof": 1}, {"name": "z", "node": 2, "dof": 2}, {"name": "theta", "node": 2, "dof": 3}]


def test_cantilever_stiffness_is_the_euler_bernoulli_matrix(make) -> None:
    module = make("columns.py", TOP, path_independent=True)
    # a tip pushed to +x with its rotation free turns clockwise (theta < 0): K_x,theta = +6EI/L^2
    expected = np.array([[12 * E * I / L**3, 0.0, 6 * E * I / L**2],
                         [0.0, E * A / L, 0.0],
                         [6 * E * I / L**2, 0.0, 4 * E * I / L]])
    measured = np.column_stack([step(module, j, list(1e-4 * np.eye(3)[j]), commit=False) / 1e-4 for j in range(3)])
    np.testing.assert_allclose(measured, expected, rtol=1e-9, atol=1e-6 * expected.max())
    assert [d.kind for d in module.describe().dofs] == ["translation", "translation", "rotation"]


def test_free_rotation_is_condensed_and_equaldof_ties_add_up(make) -> None:
    module = make("columns.py", [{"name": "x", "node": 2, "dof": 1}], parameters={"columns": 3, "top_mass": 5.0},
                  mass_from_model=True)
    force = step(module, 0, [2e-3])
    np.testing.assert_allclose(force, [3 * 3 * E * I / L**3 * 2e-3], rtol=1e-10)
    np.testing.assert_allclose(module.describe().mass, [[15.0]])


def test_steel01_spring_follows_the_bilinear_law(make) -> None:
    module = make("springs.py", [{"name": "u", "node": 2, "dof": 1}])
    targets = [0.5 * EPS_Y, 3 * EPS_Y, 1 * EPS_Y, -2 * EPS_Y, -4 * EPS_Y, 0.0, 5 * EPS_Y]
    forces = [step(module, n, [u])[0] for n, u in enumerate(targets)]
    np.testing.assert_allclose(forces, steel01_bilinear(targets), rtol=1e-10, atol=1e-9)


def test_discarded_trial_leaves_no_trace_on_a_yielding_spring(make) -> None:
    module = make("springs.py", [{"name": "u", "node": 2, "dof": 1}])
    step(module, 0, [2 * EPS_Y])
    trial = step(module, 1, [6 * EPS_Y], commit=False)          # yields further, then is discarded
    assert trial[0] == pytest.approx(steel01_bilinear([2 * EPS_Y, 6 * EPS_Y])[-1])
    force = step(module, 2, [0.0], commit=False)
    assert force[0] == pytest.approx(steel01_bilinear([2 * EPS_Y, 0.0])[-1], abs=1e-9)
    assert module.execute(2).force[0] == force[0]                 # a retried execute is the stored answer
    module.commit(2)
    assert module.stats["retried"] == 1


def test_checkpoint_restores_the_committed_history(make) -> None:
    module = make("springs.py", [{"name": "u", "node": 2, "dof": 1}])
    path = [3 * EPS_Y, -1 * EPS_Y]
    for n, u in enumerate(path):
        step(module, n, [u])
    saved = module.checkpoint()
    step(module, 2, [-8 * EPS_Y])                                  # committed, then undone by restore
    module.restore(saved)
    force = step(module, 3, [EPS_Y])
    assert force[0] == pytest.approx(steel01_bilinear(path + [EPS_Y])[-1], abs=1e-9)


def test_non_converging_step_is_refused_and_the_model_survives(make) -> None:
    module = make("springs.py", [{"name": "u", "node": 3, "dof": 1}], parameters={"case": "fracture"},
                  analysis={"max_substeps": 4})

    def chain_force(u3: float) -> float:                          # spring B before A fractures
        u2 = (60.0 + 500.0 * u3) / 1500.0
        return 500.0 * (u3 - u2)

    assert step(module, 0, [0.17])[0] == pytest.approx(chain_force(0.17), rel=1e-10)
    with pytest.raises(StepRefused, match=r"step 1 refused: OpenSees did not converge .*NormDispIncr"
                                          r".*up to 4 increments tried.*back at its last committed state"):
        step(module, 1, [0.19])
    assert step(module, 2, [0.1])[0] == pytest.approx(chain_force(0.1), rel=1e-10)


def test_registry_builds_the_kind_and_a_second_domain_holder_is_refused() -> None:
    first = build_module("opensees", {"model": "columns.py", "control": TOP[:1]}, base_dir=MODELS)
    try:
        with pytest.raises(ModuleError, match="one model per process.*hybridsim site opensees"):
            OpenSeesModule.from_config({"model": "columns.py", "control": TOP[:1]}, base_dir=MODELS)
    finally:
        first.close()


@pytest.mark.parametrize(("table", "message"), [
    ({"model": "columns.py"}, "missing key control"),
    ({"model": "nowhere.py", "control": TOP}, "does not exist"),
    ({"model": "columns.py", "control": [{"name": "x", "node": 7, "dof": 1}]}, "node 7"),
    ({"model": "columns.py", "control": [{"name": "x", "node": 1, "dof": 1}]}, "is fixed"),
    ({"model": "columns.py", "control": [{"name": "x", "node": 12, "dof": 1}], "parameters": {"columns": 2}},
     "constrained to node 2"),
    ({"model": "columns.py", "control": TOP[:1], "parameters": {"link": 0.1}}, "rigid link"),
    ({"model": "columns.py", "control": TOP[:1], "parameters": {"height": 1.0}}, "no parameter"),
    ({"model": "columns.py", "control": TOP[:1], "analysis": {"tol": 1e-6}}, "unknown key"),
    ({"model": "columns.py", "control": TOP[2:], "parameters": {"top_mass": 1.0}, "mass_from_model": True},
     r"mass at \(node, dof\) \[\(2, 1\)\]"),
    ({"model": "columns.py", "control": TOP[:1], "parameters": {"top_mass": 1.0, "columns": 2},
      "mass_from_model": True}, None),
])
def test_bad_configs_are_refused_with_the_key(table: dict, message: str | None) -> None:
    if message is None:                    # both tops carry mass, both are tied to the control DOF: fine
        OpenSeesModule.from_config(table, base_dir=MODELS).close()
        return
    with pytest.raises(ModuleError, match=message):
        module = OpenSeesModule.from_config(table, base_dir=MODELS)
        module.close()
