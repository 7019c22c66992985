"""The compiled ticks against the objects' ticks: the same run bit for bit, the same refusals word for word.

The oracle is the loop on the site's Python objects, tick by tick (``compiled=False``), whose J figures the
other maRTHS tests hold to the published ones.
"""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.problems.marths import loop, parts
from hybridsim.coordinator.problems.marths.tick import compiled_site
from hybridsim.modules.experimental.gate import ActuatorLimitExceeded
from hybridsim.modules.experimental.guards import RunawayStopped
from hybridsim.modules.experimental.module import build_site

FIELDS = ("target_strokes", "measured_strokes", "commands", "compensator_parameters")
"""the site's record, kept by both paths"""


def state_of(site) -> dict:
    """Everything a run leaves in the site's parts: their state, the gate's sample count and measured strokes, the
    guards' sample counts and the record of every sample (NaN where no row was written)."""
    records = {name: site.record.array(name) for name in FIELDS if name in site.record.fields}
    return site.state() | {"gate": (site.backend.sample, site.backend.measured.tolist()),
                           "guards": [getattr(c, "sample", None) for c in site.compensators],
                           "records": {name: np.nan_to_num(r, nan=-1.0).tolist() for name, r in records.items()}}


def both(spec: loop.RunSpec, config: dict | None = None) -> list[tuple[dict, dict]]:
    """(the logs, the site's state after) of ``spec`` run on the objects and in the kernel; ``config``: the site's."""
    out = []
    for compiled in (False, True):
        lab = parts.lab(spec.plant, spec.plant_seed, spec.noise, spec.noise_seed, spec.shared_noise,
                        spec.daq_in_loop, spec.plant_gain)
        site = build_site(config or loop.site_config(spec), lab)
        assert (compiled_site(site) is not None) is True
        logs = loop.simulate(spec, loop.InProcessSide(site), compiled)
        logs.update({name: site.record.array(name) for name in FIELDS if name in site.record.fields})
        out.append((logs, state_of(site)))
    return out


@pytest.mark.parametrize("spec", [
    loop.RunSpec(duration=2.0),
    loop.RunSpec(duration=1.0, plant="uncertain", plant_seed=1003, noise_seed=2003),
    loop.RunSpec(duration=1.0, compensator="none", record="kobe", daq_in_loop=True, shared_noise=False),
], ids=["rls-nominal", "rls-uncertain", "none-daq-in-loop"])
def test_the_compiled_ticks_are_the_objects_ticks_bit_for_bit(spec: loop.RunSpec) -> None:
    (objects, before), (kernel, after) = both(spec)
    for name in set(objects) | set(kernel):
        np.testing.assert_array_equal(kernel[name], objects[name], err_msg=name)
    assert after == before  # compensators, frame model, lab, gate: the same state to the last bit


def refusal(spec: loop.RunSpec, config: dict | None = None,
            pose_limits: np.ndarray | None = None) -> list[tuple[str, dict]]:
    """The refusal's message and the site's parts after it (:func:`state_of`), on the objects then the kernel
    (``pose_limits``: the gate's, as a site's ``[limits]`` displacement sets them)."""
    messages = []
    for compiled in (False, True):
        lab = parts.lab(spec.plant, spec.plant_seed, spec.noise, spec.noise_seed, spec.shared_noise)
        site = build_site(config or loop.site_config(spec), lab)
        site.backend.pose_limits = pose_limits
        with np.errstate(all="ignore"), pytest.raises((RunawayStopped, ActuatorLimitExceeded, RunStopped)) as stop:
            loop.simulate(spec, loop.InProcessSide(site), compiled)
        messages.append((f"{type(stop.value).__name__}: {stop.value}; sample {site.sample}", state_of(site)))
    return messages


def test_a_guard_stops_the_kernel_at_the_objects_sample_with_the_guards_message() -> None:
    """Uncompensated El Centro x 3 saturates a servo input within 8 s (test_compensators finds the sample)."""
    objects, kernel = refusal(loop.RunSpec(compensator="none", scale=3.0, duration=8.0))
    assert kernel[0] == objects[0] and "saturates the servo input" in kernel[0]
    assert kernel[1] == objects[1]  # the sample counts, the measured strokes, the record up to the refusal


def test_the_gate_refuses_in_the_kernel_what_it_refuses_tick_by_tick() -> None:
    """An increment of 0.05 mm a sample: the strong motion's first larger move is refused, nothing sent."""
    spec = loop.RunSpec(duration=6.0)
    config = loop.site_config(spec) | {"gate": {"increment": [5e-5, 5e-5]}}
    objects, kernel = refusal(spec, config)
    assert kernel[0] == objects[0] and "per sample (increment, velocity)" in kernel[0]
    assert kernel[1] == objects[1]  # the sample counts, the measured strokes, the record up to the refusal


def test_the_gate_refuses_in_the_kernel_a_target_beyond_the_sites_displacement_limit() -> None:
    """|x_27| of El Centro x 0.4 passes 0.4 mm within 6 s (0.51 mm at its peak); the rotations are not limited."""
    objects, kernel = refusal(loop.RunSpec(duration=6.0), pose_limits=np.array([4e-4, np.inf, np.inf]))
    assert kernel[0] == objects[0] and "interface DOF 1: target" in kernel[0]
    assert kernel[1] == objects[1]


def test_a_site_without_a_compiled_sample_runs_on_its_objects() -> None:
    """NARX has no kernel; a gate with a declared start, or on hold, checks more than the kernel does."""
    narx = build_site(loop.site_config(loop.RunSpec(compensator="narx")), parts.lab("nominal", None, True, 123))
    started = loop.site_config(loop.RunSpec()) | {"gate": {"start": [1e-3, 1e-3], "start_tolerance": 1.0}}
    assert compiled_site(narx) is None
    assert compiled_site(build_site(started, parts.lab("nominal", None, True, 123))) is None
    held = build_site(loop.site_config(loop.RunSpec()), parts.lab("nominal", None, True, 123))
    held.backend.interlock.hold("an operator's hold")
    assert compiled_site(held) is None


def test_a_held_site_refuses_the_first_command_with_the_gates_words() -> None:
    site = build_site(loop.site_config(loop.RunSpec()), parts.lab("nominal", None, True, 123))
    site.backend.interlock.hold("an operator's hold")
    with pytest.raises(ActuatorLimitExceeded, match="held since an operator's hold; an operator clears"):
        loop.simulate(loop.RunSpec(duration=0.05), loop.InProcessSide(site))
    assert (site.sample, site.backend.sample) == (0, 0)  # the reading at rest only: nothing was sent
