"""The `plant` module: the virtual lab behind the module interface (lockstep, at-rest reading, trials)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.marths import parts
from hybridsim.wire.contract import Command, ModuleError, Session, StepRefused
from hybridsim.modules.registry import build_module

DT = 1 / 1024


def _plant(noise: bool = True):
    module = build_module("plant", parts.plant_config("nominal", None, noise, 123))
    module.open(Session(DT, ("actuator_1", "actuator_2")))
    return module


def _step(module, step: int, sample: int, command) -> np.ndarray:
    module.propose(step, Command(sample * DT, np.asarray(command, float)))
    result = module.execute(step)
    module.commit(step)
    return result.displacement


def test_first_step_reads_the_noise_at_rest_then_follows_the_lab() -> None:
    module = _plant()
    sigma = np.sqrt(1.5e-7 * 1024)
    noise = sigma * np.random.default_rng(123).standard_normal(50)
    np.testing.assert_array_equal(_step(module, 0, 0, [0.0, 0.0]), [noise[0] / 1000] * 2)
    lab = parts.lab("nominal", None, True, 123)
    commands = 1e-3 * np.sin(np.arange(1, 40)[:, None] * [0.1, 0.2])
    for n, u in enumerate(commands, start=1):
        np.testing.assert_array_equal(_step(module, n, n, u), lab.drive(u))
    stats = module.close()
    volts = parts.daq().volts(commands * 1000)
    assert stats["max_command_volts_1"] == pytest.approx(np.abs(volts[:, 0]).max(), rel=1e-14)


def test_a_new_proposal_for_the_same_sample_discards_the_trial() -> None:
    module, fresh = _plant(), _plant()
    for m in (module, fresh):
        _step(m, 0, 0, [0, 0])
    module.propose(1, Command(DT, np.array([1e-3, 0.0])))
    module.execute(1)
    module.propose(2, Command(DT, np.array([0.0, 2e-3])))  # same sample, new command
    retried = module.execute(2).displacement
    module.commit(2)
    np.testing.assert_array_equal(retried, _step(fresh, 1, 1, [0.0, 2e-3]))
    np.testing.assert_array_equal(_step(module, 3, 2, [0, 0]), _step(fresh, 2, 2, [0, 0]))


def test_checkpoint_restore_continues_identically() -> None:
    module = _plant()
    _step(module, 0, 0, [0, 0])
    for n in range(1, 20):
        _step(module, n, n, [1e-3, -1e-3])
    saved = module.checkpoint()
    ahead = [_step(module, 20 + i, 20 + i, [5e-4, 0]) for i in range(5)]
    module.restore(saved)
    again = [_step(module, 30 + i, 20 + i, [5e-4, 0]) for i in range(5)]
    np.testing.assert_array_equal(ahead, again)


@pytest.mark.parametrize(("sample", "command", "reason"), [
    (0, [1e-3, 0.0], "at rest"), (2, [0.0, 0.0], "next command"), (0.5, [0.0, 0.0], "control grid")])
def test_refusals(sample: float, command, reason: str) -> None:
    module = _plant(noise=False)
    if reason != "at rest":
        _step(module, 0, 0, [0, 0])
    with pytest.raises(StepRefused, match=reason):
        module.propose(5, Command(sample * DT, np.array(command)))


def test_the_session_must_run_at_the_control_sample() -> None:
    module = build_module("plant", parts.plant_config("ideal", None, False, 0))
    with pytest.raises(ModuleError, match="control sample"):
        module.open(Session(2 * DT, ("actuator_1", "actuator_2")))


def test_ideal_plant_reaches_each_command_within_its_sample() -> None:
    module = build_module("plant", parts.plant_config("ideal", None, True, 0))
    module.open(Session(DT, ("actuator_1", "actuator_2")))
    _step(module, 0, 0, [0, 0])
    np.testing.assert_array_equal(_step(module, 1, 1, [2e-3, -1e-3]), [2e-3, -1e-3])  # noise-free
