"""The `experimental` module: the site behind the module interface, in process (plant in process too)."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.problems.marths import loop, parts
from hybridsim.coordinator.problems.marths import structure as ms
from hybridsim.coordinator.problems.marths.evaluation import criteria
from hybridsim.wire.contract import Command, ModuleError, Session, StepRefused
from hybridsim.modules.experimental.guards import GuardedCompensator
from hybridsim.modules.experimental.module import build_site
from hybridsim.modules.registry import build_module

DT = parts.DT


PREDICTOR_CORRECTOR = {"scheme": "predictor-corrector", "order": 3, "arrival": 0.6}


def _module(spec: loop.RunSpec, tmp_path=None, dt: float = DT, generation=None):
    plant = parts.plant_config(spec.plant, spec.plant_seed, spec.noise, spec.noise_seed)
    config = parts.site_config(spec.compensator, backend={"plant": plant},
                                      record=None if tmp_path is None else "site.h5")
    if generation is not None:
        config["command_generation"] = generation
    module = build_module("experimental", config, base_dir=tmp_path)
    module.open(Session(dt, parts.SITE_DOFS))
    return module


@pytest.mark.parametrize("generation", [None, PREDICTOR_CORRECTOR])
def test_module_path_equals_the_direct_site_bit_for_bit(tmp_path, generation) -> None:
    """One control sample per step: interpolation and the predictor-corrector are both lockstep."""
    spec = loop.RunSpec(compensator="rls", plant="nominal", duration=6.0)
    module = _module(spec, tmp_path, generation=generation)
    logs = loop.simulate(spec, loop.ModuleSide(module, DT))
    stats = module.close()
    with h5py.File(tmp_path / "site.h5") as f:
        record = {name: f[name][()] for name in ("measured_strokes", "commands")}
    through_module = loop.history(spec, logs, record)
    direct = loop.run(spec)
    np.testing.assert_array_equal(through_module.measured_strokes, direct.measured_strokes)
    np.testing.assert_array_equal(through_module.numerical, direct.numerical)
    assert criteria(through_module, 1024.0) == criteria(direct, 1024.0)
    assert [stats["max_command_volts_1"], stats["max_command_volts_2"]] == pytest.approx(direct.max_command_volts,
                                                                                         rel=1e-14)


def test_iterated_trials_of_one_sample_keep_only_the_last() -> None:
    spec = loop.RunSpec(compensator="none", plant="ideal", duration=6.0)
    module = _module(spec)
    logs = loop.simulate(spec, loop.ModuleSide(module, DT))
    direct_side, _ = loop.build_side(spec)
    direct = loop.simulate(spec, direct_side)
    np.testing.assert_array_equal(logs["numerical"], direct["numerical"])
    np.testing.assert_array_equal(logs["feedback"], direct["feedback"])


def test_two_control_samples_per_step_interpolate_the_target() -> None:
    spec = loop.RunSpec(compensator="rls", plant="nominal", noise=False)
    module = _module(spec, dt=2 * DT)
    module.propose(0, Command(0.0, np.zeros(3)))
    module.execute(0)
    module.commit(0)
    targets = [np.array([1e-4 * k, -1e-5 * k, 0.0]) for k in (1, 2, 3)]
    results = []
    for k, target in enumerate(targets, start=1):
        module.propose(k, Command(2 * k * DT, target))
        results.append(module.execute(k))
        module.commit(k)
    side, _ = loop.build_side(spec)
    side.start()
    previous = np.zeros(3)
    for target, result in zip(targets, results):
        side.trial(0.5 * (previous + target))
        side.commit()
        expected = side.trial(target)
        side.commit()
        previous = target
        np.testing.assert_array_equal(result.displacement, expected.displacement)
        np.testing.assert_array_equal(result.force, expected.force)


def test_two_control_samples_per_step_predict_then_correct() -> None:
    """Order 1, arrival 0.5: sample 1 of step n+1 is predictP1(1/2) = 1.5 d_n - 0.5 d_{n-1}, sample 2 is d_{n+1}."""
    spec = loop.RunSpec(compensator="rls", plant="nominal", noise=False)
    module = _module(spec, dt=2 * DT, generation={"scheme": "predictor-corrector", "order": 1, "arrival": 0.5})
    module.propose(0, Command(0.0, np.zeros(3)))
    module.execute(0)
    module.commit(0)
    targets = [np.array([1e-4 * k * k, -1e-5 * k, 0.0]) for k in (1, 2, 3)]
    results = []
    for k, target in enumerate(targets, start=1):
        module.propose(k, Command(2 * k * DT, target))
        module.execute(k)  # a first trial, repeated: only the committed one counts
        module.propose(k, Command(2 * k * DT, target))
        results.append(module.execute(k))
        module.commit(k)
    side, _ = loop.build_side(spec)
    side.start()
    history = [np.zeros(3), np.zeros(3)]
    for target, result in zip(targets, results):
        side.trial(1.5 * history[-1] - 0.5 * history[-2])
        side.commit()
        expected = side.trial(target)
        side.commit()
        history.append(target)
        np.testing.assert_array_equal(result.displacement, expected.displacement)
        np.testing.assert_array_equal(result.force, expected.force)


def test_a_bad_command_generation_is_refused_when_the_module_is_built() -> None:
    config = parts.site_config("none", backend={"plant": parts.plant_config("nominal", None, False, 0)})
    with pytest.raises(ModuleError, match="experimental module: command_generation: the predictor-corrector needs "
                                          "arrival"):
        build_module("experimental", {**config, "command_generation": {"scheme": "predictor-corrector"}})


@pytest.mark.parametrize("backend, refusal", [
    ({"address": "127.0.0.1:1", "transport": "udp"}, "backend.transport must be one of 'auto', 'stream', 'unary', "
                                                     "'link', got 'udp'$"),
    ({"address": "127.0.0.1:1", "link": "tcp"}, r"backend.link is now backend.transport \(link = 'tcp' is transport = "
                                                r"'link', 'grpc' is 'stream', 'auto' stays 'auto'\)$"),
    ({"address": "127.0.0.1:1", "links": "tcp"}, "unknown key backend.links; allowed: address, channels, daemon,"),
    ({"address": "127.0.0.1:1", "daemon": {}}, "give exactly one of plant or address or daemon or generic_tcp in "
                                               "backend, not address and daemon$"),
    ({"plant": parts.plant_config("nominal", None, False, 0), "transport": "link"},
     "experimental module: backend.transport: a plant in this process or a lab.s generic TCP controller has no "
     "transport"),
])
def test_a_bad_plant_backend_is_refused_when_the_module_is_built(backend, refusal) -> None:
    config = parts.site_config("none", backend=backend)
    with pytest.raises(ModuleError, match=f"^{refusal}"):
        build_module("experimental", config)


def test_refusals_name_the_reason() -> None:
    module = _module(loop.RunSpec(compensator="none", plant="nominal", noise=False))
    with pytest.raises(StepRefused, match="next target"):
        module.propose(0, Command(3 * DT, np.zeros(3)))
    module.propose(1, Command(0.0, np.array([1e-3, 0.0, 0.0])))
    module.execute(1)
    with pytest.raises(StepRefused, match="never committed"):
        module.commit(1)


def test_a_pre_test_at_rest_reads_the_static_stiffness_of_the_frame_model() -> None:
    """Central differences at t = 0 (never committed) give K2 of §17.1 in SAP sign; M29 has no static part."""
    module = _module(loop.RunSpec(compensator="rls", plant="nominal", noise=True))
    h, columns = 1e-5, []
    for j, step in zip(range(3), (1, 3, 5)):
        probe = np.zeros(3)
        probe[j] = h
        forces = []
        for s, sign in ((step, 1.0), (step + 1, -1.0)):
            module.propose(s, Command(0.0, sign * probe))
            forces.append(module.execute(s).force)
        columns.append((forces[0] - forces[1]) / (2 * h))
    stiffness = np.array(columns).T
    flip = np.diag([1.0, -1.0])
    k2 = flip @ ms.feedback_frame().condensed_stiffness() @ flip
    np.testing.assert_allclose(stiffness[:2, :2], k2, rtol=1e-9)
    assert np.all(stiffness[:, 2] == 0) and np.all(np.abs(stiffness[2]) < 1e-6 * abs(k2[0, 0]))
    module.propose(7, Command(0.0, np.zeros(3)))  # the rest state, committed: the test can start
    module.execute(7)
    module.commit(7)
    module.propose(8, Command(DT, np.zeros(3)))
    assert np.all(np.isfinite(module.execute(8).force))


def test_the_benchmark_site_guards_each_compensator_at_the_daq_saturation() -> None:
    """volts = u / (cg g) - c / g (§9): actuator 1 g = 7.4921 mm/V, c = 0.0092 mm, cg = 1.053; actuator 2
    g = 7.3907, c = -0.0059, cg = 1.055."""
    lab = parts.lab("nominal", None, False, 0)
    site = build_site(parts.site_config("rls"), lab)
    assert all(isinstance(c, GuardedCompensator) and c.inner.name == "rls" for c in site.compensators)
    for c, (g, offset, cg), label in zip(site.compensators, ((7.4921, 0.0092, 1.053), (7.3907, -0.0059, 1.055)),
                                         ("actuator 1", "actuator 2")):
        assert c.limits.volts == 3.8 and c.label == label and c.sample_period == DT
        assert c.limits.volts_per_unit == pytest.approx(1 / (cg * g), rel=1e-15)
        assert c.limits.volts_offset == pytest.approx(-offset / g, rel=1e-15)
    unguarded = build_site(parts.site_config("rls", guard=False), lab)
    assert not any(isinstance(c, GuardedCompensator) for c in unguarded.compensators)
    with pytest.raises(ModuleError, match="one table per compensator"):
        build_site({**parts.site_config("rls"), "guards": [{"volts": 3.8}]}, lab)
