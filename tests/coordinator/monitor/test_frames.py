"""Frames from history arrays: sampled rows, exact step-time statistics and limit margins from closed forms."""

from __future__ import annotations

import dataclasses

import numpy as np

from hybridsim.coordinator.integrity.rules import Rule
from hybridsim.coordinator.monitor.frames import STEP_TIME_EDGES_S, FrameBuilder, merged_chunks, run_info
from hybridsim.coordinator.monitor.indicators import indicator_layouts
from hybridsim.coordinator.monitor.jsonview import frame_json
from hybridsim.coordinator.monitor.layout import run_layout

DT = 0.001
STEPS = 1000
AMPLITUDE = 0.02  # m
STIFFNESS = 5.0e4  # N/m


def _arrays() -> dict[str, np.ndarray]:
    """A two-DOF history: x1 = A sin(w t), x2 = 2 x1, one module on [x2, x1] measuring 0.9 of its command."""
    rows = STEPS + 1
    t = np.arange(rows) * DT
    x1 = AMPLITUDE * np.sin(2 * np.pi * 2.0 * t)
    disp = np.column_stack([x1, 2 * x1])
    wall = np.full(rows, 0.2 * DT)
    wall[[10, 500, 990]] = [1.5 * DT, 3.0 * DT, 1.01 * DT]  # three late steps
    wall[0] = 0.0
    measured = 0.9 * disp[:, ::-1]
    return {"time": t, "step_id": np.arange(rows), "ground_acceleration": np.zeros(rows), "wall_step_s": wall,
            "displacement": disp, "velocity": disp, "acceleration": disp, "restoring_force": disp,
            "modules/pier/displacement": measured, "modules/pier/force": STIFFNESS * measured}


def _layout(limits: dict | None, decimation_points: int = 100):
    config = {"dofs": ["x2", "x1"], **({"limits": limits} if limits else {})}
    return run_layout(experiment="synthetic", integrator="alpha-os", dt=DT, total_steps=STEPS, dofs=("x1", "x2"),
                      shaken=("x1",), modules=[("pier", config, "in process")], widths={"pier": 2},
                      max_points=decimation_points)


def test_a_frame_samples_every_decimated_step_and_the_last_one() -> None:
    arrays, layout = _arrays(), _layout(None)
    assert layout.decimation == 10
    frame = FrameBuilder(layout).frame(arrays, 95, 238)
    assert list(frame.step) == [100, 110, 120, 130, 140, 150, 160, 170, 180, 190, 200, 210, 220, 230, 237]
    rows = np.array(frame.step)
    np.testing.assert_array_equal(frame.response, arrays["displacement"][rows, 0])
    # module vectors row-major over the module's DOFs [x2, x1]: the command is the structure's x2, x1
    np.testing.assert_array_equal(np.reshape(frame.command, (-1, 2)), arrays["displacement"][rows][:, [1, 0]])
    np.testing.assert_array_equal(np.reshape(frame.measured, (-1, 2)), arrays["modules/pier/displacement"][rows])
    assert frame.progress.step == 237 and frame.progress.time_s == arrays["time"][237]


def test_statistics_count_every_step_not_only_the_sampled_ones() -> None:
    arrays, builder = _arrays(), FrameBuilder(_layout(None))
    for start, stop in ((0, 333), (333, 334), (334, 1001)):
        frame = builder.frame(arrays, start, stop)
    progress = frame.progress
    assert progress.late_steps == 3
    assert progress.max_wall_step_s == 3.0 * DT
    assert sum(progress.step_time_counts) == STEPS  # row 0 is t = 0, not a step
    assert np.isclose(progress.mean_wall_step_s, (997 * 0.2 + 1.5 + 3.0 + 1.01) * DT / STEPS, rtol=1e-12)
    bin_of = np.searchsorted(STEP_TIME_EDGES_S, 0.2 * DT, side="right") - 1
    assert progress.step_time_counts[bin_of] == STEPS - 3


def test_margins_are_the_unused_share_of_each_declared_limit() -> None:
    arrays = _arrays()
    limit_d, limit_f = 0.05, 2.5e3
    frame = FrameBuilder(_layout({"displacement": [limit_d, 1.0], "force": limit_f})).frame(arrays, 0, STEPS + 1)
    peak_x2, peak_x1 = 0.9 * 2 * AMPLITUDE, 0.9 * AMPLITUDE  # sin reaches 1 at t = 0.125 s (a sampled row)
    np.testing.assert_allclose(frame.progress.displacement_margin, [1 - peak_x2 / limit_d, 1 - peak_x1 / 1.0],
                               rtol=1e-12)
    np.testing.assert_allclose(frame.progress.force_margin,
                               [1 - STIFFNESS * peak_x2 / limit_f, 1 - STIFFNESS * peak_x1 / limit_f], rtol=1e-12)


def test_a_dof_without_a_limit_has_no_margin() -> None:
    frame = FrameBuilder(_layout({"force": [1e4, 1e4]})).frame(_arrays(), 0, 11)
    assert np.isnan(frame.progress.displacement_margin).all()
    assert not np.isnan(frame.progress.force_margin).any()


def test_merged_chunks_keep_every_sample_in_order() -> None:
    arrays, builder = _arrays(), FrameBuilder(_layout(None, decimation_points=STEPS))
    frames = [builder.frame(arrays, a, b) for a, b in ((0, 400), (400, 401), (401, 1001))]
    chunks = merged_chunks(frames, samples=300)
    assert [len(c.step) for c in chunks] == [400, 601]
    assert [s for c in chunks for s in c.step] == list(range(STEPS + 1))
    assert chunks[-1].progress == frames[-1].progress


def test_a_crossing_is_the_first_step_past_the_threshold_of_every_step_not_only_the_sampled() -> None:
    """pier's TI on [x2, x1] is (-t, t / 2) m^2 against 0.3335: |TI| of x2 passes it at t = 0.334 s (step 334, not a
    sampled one); its E_err / E_in, -t, is compared signed and never passes 0.1 (a site that takes energy out)."""
    arrays = _arrays()
    t = arrays["time"]
    arrays |= {"integrity/modules/pier/energy_error": -t, "integrity/modules/pier/tracking": np.column_stack([-t, t / 2])}
    rules = {"pier": Rule({"tracking": 0.3335, "energy_error": 0.1}, "stop")}
    layout = dataclasses.replace(_layout(None), indicators=indicator_layouts(arrays, rules, {"pier": ("x2", "x1")}))
    builder = FrameBuilder(layout)
    frames = [builder.frame(arrays, a, b) for a, b in ((0, 300), (300, 700), (700, STEPS + 1))]
    assert [len(f.progress.crossings) for f in frames] == [0, 1, 1]
    crossing = frames[-1].progress.crossings[0]
    assert (crossing.module, crossing.indicator, crossing.step, crossing.threshold, crossing.action) == \
        ("pier", "tracking", 334, 0.3335, "stop")
    assert crossing.value == t[334] and crossing.time_s == t[334]
    assert 334 not in frames[1].step  # found between the sampled rows
    rows = np.array(frames[1].step)
    np.testing.assert_array_equal(np.reshape(frames[1].indicators, (rows.size, 3)),
                                  np.column_stack([-t[rows], -t[rows], t[rows] / 2]))


def test_a_balance_of_another_width_is_shown_by_position() -> None:
    """A results file whose balance has other columns than this version names (3 here) is still drawn."""
    arrays = _arrays() | {"integrity/balance": np.arange(3.0 * (STEPS + 1)).reshape(-1, 3)}
    layout = dataclasses.replace(_layout(None), indicators=indicator_layouts(arrays, {}, {}))
    assert [i.columns for i in layout.indicators] == [("balance#0", "balance#1", "balance#2")]
    frame = FrameBuilder(layout).frame(arrays, 0, 11)
    assert frame_json(frame, run_info(layout))["indicators"] == arrays["integrity/balance"][frame.step].T.tolist()
