"""Experimental setups: forward then inverse returns the DOFs, the force map is the virtual-work transpose of a
finite-difference Jacobian, the rig's own closed forms (OpenFresco's, written out here), the platform's Newton
count and its refusal of an unreachable pose, and one-line refusals of bad geometry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hybridsim.coordinator.problems.marths import parts
from hybridsim.modules.experimental.setups.base import UnreachablePose
from hybridsim.wire.contract import ModuleError
from hybridsim.modules.experimental.setups.kinds import KINDS, build_setup

PLATFORM = {"kind": "loading-platform",  # an LBCB-like crosshead: two actuators along x, one along y, three vertical
            "attachments": [[-0.5, 0.35, 0], [-0.5, -0.35, 0], [0, -0.5, 0], [0.4, 0.3, 0], [-0.4, 0.3, 0],
                            [0, -0.4, 0]],
            "bases": [[-1.7, 0.35, 0], [-1.7, -0.35, 0], [0, -1.7, 0], [0.4, 0.3, 1.2], [-0.4, 0.3, 1.2],
                      [0, -0.4, 1.2]]}
MARTHS = {"kind": "marths-coupler", **{k: list(v) if isinstance(v, tuple) else v
                                       for k, v in parts._coupler_table().items()}}

# ESFourActuators3d's geometry: actuators at 45 degrees from the model's x, on rigid links, a spreader beam's rods
OF4 = {"L": [1.5, 1.4, 1.3, 1.2], "a": [0.2, 0.25, 0.3, 0.35], "h": 0.6, "phi": 45.0}
SPREADER = {"kind": "four-actuators-3d", "lengths": [OF4["L"][0], OF4["L"][2], OF4["L"][1], OF4["L"][3]],
            "heights": [0.0, OF4["h"], 0.0, OF4["h"]], "links": [OF4["a"][0], OF4["a"][2], OF4["a"][1], OF4["a"][3]],
            "angle": OF4["phi"], "rods": {"pins": [[0.3, 0.3, 1.1], [-0.3, -0.3, 1.1]], "lengths": [2.0, 2.2]}}
BRACED = {"kind": "inverted-v-brace", "lengths": [1.5, 1.2, 1.2], "half_span": 0.8,
          "braces": {"feet": [[-1.5, -2.0], [1.5, -2.0]], "joints": [[-0.1, -0.05], [0.1, -0.05]]}}

# (table, working range of each DOF: m or rad); rotations are large where the rig allows
SETUPS = {
    "none": ({"kind": "none", "dofs": ["u", "v"], "kinds": ["translation", "rotation"]}, [0.5, 0.5]),
    "linear": ({"kind": "linear", "dofs": ["a", "b"], "matrix": [[1.0, 0.3], [0.0, 2.0], [1.0, -1.0]]}, [0.5, 0.5]),
    "one-actuator": ({"kind": "one-actuator", "side": "right"}, [0.5]),
    "two-actuators-2d": ({"kind": "two-actuators-2d", "lengths": [1.2, 1.0], "height": 0.5}, [0.3, 0.5]),
    "two-actuators-2d-right": ({"kind": "two-actuators-2d", "lengths": [1.2, 1.0], "height": 0.5, "side": "right"},
                               [0.3, 0.5]),
    "three-actuators-2d": ({"kind": "three-actuators-2d", "lengths": [1.5, 1.2, 1.1], "spacing": [0.6, 0.7]},
                           [0.3, 0.3, 0.5]),
    "three-actuators-2d-offsets": ({"kind": "three-actuators-2d", "lengths": [1.5, 1.2, 1.1], "spacing": [0.6, 0.4],
                                    "side": "right", "joint_offsets": {"horizontal": 0.2, "vertical": [0.1, 0.15]}},
                                   [0.3, 0.3, 0.5]),
    "inverted-v-brace": ({"kind": "inverted-v-brace", "lengths": [1.5, 1.2, 1.2], "half_span": 0.8},
                         [0.3, 0.3, 0.5]),
    "four-actuators-3d": ({"kind": "four-actuators-3d", "lengths": [1.5, 1.4, 1.5, 1.3], "heights": [0.3, 0.9, 0.3,
                                                                                                    0.8]},
                          [0.2, 0.2, 0.4, 0.4]),
    "four-actuators-3d-spreader": (SPREADER, [0.2, 0.2, 0.3, 0.3]),
    "inverted-v-brace-braces": (BRACED, [0.2, 0.2, 0.4]),
    "loading-platform": (PLATFORM, [0.1, 0.1, 0.1, 0.3, 0.3, 0.3]),
    "marths-coupler": (MARTHS, [0.05, 0.5]),
}


def poses(setup_range: list[float], count: int = 60, seed: int = 7) -> np.ndarray:
    """Poses spread over the working range: its corners and uniform draws."""
    rng = np.random.default_rng(seed)
    span = np.asarray(setup_range)
    corners = np.array([span * np.where(rng.random(span.size) < 0.5, -1.0, 1.0) for _ in range(8)])
    return np.vstack([corners, rng.uniform(-span, span, (count, span.size))])


def test_every_kind_is_covered() -> None:
    assert {t["kind"] for t, _ in SETUPS.values()} == set(KINDS)


@pytest.mark.parametrize("name", SETUPS)
def test_forward_then_inverse_returns_the_dofs(name: str) -> None:
    table, span = SETUPS[name]
    setup = build_setup(table)
    worst = max(float(np.max(np.abs(setup.pose(setup.strokes(q)) - q))) for q in poses(span))
    assert worst <= 1e-12


@pytest.mark.parametrize("name", SETUPS)
def test_force_map_is_the_transpose_of_a_finite_difference_jacobian(name: str) -> None:
    table, span = SETUPS[name]
    setup = build_setup(table)
    rng = np.random.default_rng(3)
    h = 1e-6
    for q in poses(span, count=20):
        jacobian = np.column_stack([(setup.strokes(q + h * e) - setup.strokes(q - h * e)) / (2 * h)
                                    for e in np.eye(q.size)])
        loads = rng.normal(0.0, 1e5, setup.actuators)
        expected = jacobian.T @ loads  # virtual work: loads . ds = (J^T loads) . dq
        forces = setup.dof_forces(q, loads) if setup.cells == setup.actuators else setup.jacobian(q).T @ loads
        assert forces == pytest.approx(expected, rel=1e-7, abs=1e-7 * np.max(np.abs(expected)))


def test_three_actuators_match_openfresco_closed_forms() -> None:
    """ESThreeActuators2d (left) and ESThreeActuatorsJntOff2d (right), nonlinear geometry, written out."""
    la0, la1, la2, l0, l1 = 1.5, 1.2, 1.1, 0.6, 0.7
    plain = build_setup({"kind": "three-actuators-2d", "lengths": [la0, la1, la2], "spacing": [l0, l1]})
    # joint offsets: horizontal actuator L3 beyond the right joint, vertical joints L4, L5 below the beam
    j1, j2, j3, j4, j5 = 0.6, 0.4, 0.2, 0.1, 0.15
    offset = build_setup({"kind": "three-actuators-2d", "lengths": [la0, la1, la2], "spacing": [j1, j2],
                          "side": "right", "joint_offsets": {"horizontal": j3, "vertical": [j4, j5]}})
    r0, r1, b0, b1 = math.hypot(j1, j4), math.hypot(j2, j5), math.atan2(j4, j1), math.atan2(j5, j2)
    for x, y, t in poses([0.3, 0.3, 0.5], count=10):
        c, s = math.cos(t), math.sin(t)
        expected = [math.hypot(x + l0 * (1 - c) + la0, y - l0 * s) - la0,
                    math.hypot(x + l0 * (1 - c), y - l0 * s + la1) - la1,
                    math.hypot(x - l1 * (1 - c), y + l1 * s + la2) - la2]
        assert plain.strokes(np.array([x, y, t])) == pytest.approx(expected, abs=1e-14)
        expected = [math.hypot(x + (j2 + j3) * c - j2 - j3 - la0, y + (j2 + j3) * s) - la0,
                    math.hypot(x - r0 * math.cos(b0 + t) + j1, y - r0 * math.sin(b0 + t) + la1 + j4) - la1,
                    math.hypot(x + r1 * math.cos(t - b1) - j2, y + r1 * math.sin(t - b1) + la2 + j5) - la2]
        assert offset.strokes(np.array([x, y, t])) == pytest.approx(expected, abs=1e-14)


def test_two_actuators_match_openfresco_closed_form() -> None:
    """ESTwoActuators2d, nonlinear geometry, actuators left: s1 = x, s2 = |(x - L sin t + La2, L cos t - L)| - La2."""
    la2, height = 1.0, 0.5
    setup = build_setup({"kind": "two-actuators-2d", "lengths": [1.2, la2], "height": height})
    for x, t in poses([0.3, 0.5], count=10):
        expected = [x, math.hypot(x - height * math.sin(t) + la2, height * math.cos(t) - height) - la2]
        assert setup.strokes(np.array([x, t])) == pytest.approx(expected, abs=1e-14)
        assert setup.iterations == 0  # closed-form inverse
    with pytest.raises(UnreachablePose, match="no rotation gives actuator 2"):
        setup.pose(np.array([0.0, 1.5]))


def test_marths_coupler_is_the_benchmarks_and_keeps_its_estimate() -> None:
    coupler = parts.coupler()
    exact = build_setup(MARTHS)
    benchmark = build_setup({**MARTHS, "inverse": "benchmark"})
    q = np.array([0.004, 0.01])
    np.testing.assert_array_equal(exact.strokes(q), coupler.strokes(*q))
    np.testing.assert_array_equal(benchmark.pose(exact.strokes(q)), coupler.frame(*coupler.strokes(*q)))
    assert abs(benchmark.pose(exact.strokes(q))[0] - q[0]) == pytest.approx(2e-8, rel=0.5)  # the spec's O(theta^3)
    assert np.max(np.abs(exact.pose(exact.strokes(q)) - q)) <= 1e-15


def test_platform_newton_converges_in_at_most_six_iterations() -> None:
    setup = build_setup(PLATFORM)
    counts = []
    for q in poses([0.1, 0.1, 0.1, 0.3, 0.3, 0.3], count=100):
        setup.pose(setup.strokes(q))
        counts.append(setup.iterations)
    # quadratic from the linearised pose (the last iteration confirms): 4 or 5 across +-0.1 m, +-0.3 rad, 6 at worst
    assert max(counts) <= 6 and np.mean(counts) < 5.0 and min(counts) >= 4
    small = setup.pose(setup.strokes(np.array([1e-3, 0, 0, 0, 0, 1e-3])))
    assert setup.iterations <= 3 and small == pytest.approx([1e-3, 0, 0, 0, 0, 1e-3], abs=1e-15)


@pytest.mark.parametrize("strokes", [[0, 0, 0, 2.0, -1.0, 0], [0.5, -0.5, 0, 0, 0, 0]])
def test_platform_refuses_an_unreachable_pose(strokes: list[float]) -> None:
    setup = build_setup(PLATFORM)
    with pytest.raises(UnreachablePose, match=r"no pose found for the strokes .* mm: Newton did not converge in 25 "
                                              r"iterations .* out of the rig's reach"):
        setup.pose(np.array(strokes, float))


def test_stroke_range_refuses_a_pose_beyond_an_actuator() -> None:
    setup = build_setup({**PLATFORM, "stroke_range": [[-0.25, 0.25]] * 6})
    with pytest.raises(UnreachablePose, match=r"actuator 1 would need a stroke of 300 mm, beyond its range "
                                              r"\[-250, 250\] mm"):
        setup.checked_strokes(np.array([0.3, 0, 0, 0, 0, 0]))
    with pytest.raises(UnreachablePose, match="actuator 4 would need"):
        setup.pose(np.array([0, 0, 0, -0.3, 0, 0]))


@pytest.mark.parametrize(("table", "message"), [
    ({"kind": "twelve-actuators"}, "setup.kind must be one of 'none', 'linear'"),
    ({"kind": "one-actuator", "stroke": 1}, "unknown key setup.stroke; allowed: dof, dof_kind, kind, side"),
    ({"kind": "two-actuators-2d", "lengths": [1.0, 1.0]}, "missing key setup.height (a number > 0 (m)"),
    ({"kind": "two-actuators-2d", "lengths": [1.0, -1.0], "height": 0.5}, "setup.lengths must be a list of numbers, "
                                                                          "each > 0 (m)"),
    ({"kind": "two-actuators-2d", "lengths": [1.0], "height": 0.5}, "setup 'two-actuators-2d': lengths must be 2 "
                                                                    "numbers"),
    ({"kind": "two-actuators-2d", "lengths": [1.0, 1.0], "height": 0.5, "side": "up"},
     "setup.side must be one of 'left', 'right'"),
    ({"kind": "three-actuators-2d", "lengths": [1, 1, 1], "spacing": [1, 1], "joint_offsets": {"h": 1}},
     "unknown key setup.joint_offsets.h; allowed: horizontal, vertical"),
    ({"kind": "four-actuators-3d", "lengths": [1, 1, 1, 1], "heights": [0.5, 0.5, 0.2, 0.4]},
     "needs two different heights"),
    ({"kind": "linear", "dofs": ["a", "b"], "matrix": [[1, 2], [2, 4]]}, "matrix has rank 1 < 2 DOFs"),
    ({**PLATFORM, "bases": [[0, 0, 1]] * 6}, "hold only"),
    ({**PLATFORM, "attachments": [[0, 0]] * 6}, "attachments must be six points"),
    ({**PLATFORM, "stroke_range": [[0.1, 0.2]] * 6}, "min < 0 < max"),
    ({**PLATFORM, "max_iterations": 0}, "setup.max_iterations must be an integer >= 1"),
    ({**MARTHS, "inverse": "guess"}, "setup.inverse must be one of 'exact', 'benchmark'"),
])
def test_bad_geometry_is_one_line_naming_the_key(table: dict, message: str) -> None:
    """The declared keys (the kind's CONFIG) first, then what spans keys (counts, rank, a singular layout)."""
    with pytest.raises(ModuleError) as info:
        build_setup(table)
    assert message in str(info.value) and "\n" not in str(info.value)


def _rotation(r: np.ndarray) -> np.ndarray:
    """exp([r]x) by scipy (independent of the setups' Rodrigues kernel)."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_rotvec(r).as_matrix()


def test_the_spreader_beams_rods_enter_the_force_map_by_their_length_changes() -> None:
    """Six load cells: four actuators (pushing) and two rods (tension, pulling the head toward the floor pins);
    DOF forces = J^T f - J_rods^T T with J_rods the central difference (h = 1e-6) of the rods' lengths, written
    out here from the rods' geometry."""
    setup = build_setup(SPREADER)
    assert setup.cells == 6
    pins = np.array(SPREADER["rods"]["pins"])
    floor = pins - np.outer(SPREADER["rods"]["lengths"], [0.0, 0.0, 1.0])

    def lengths(q: np.ndarray) -> np.ndarray:
        u, r = np.array([q[0], q[1], 0.0]), np.array([q[2], q[3], 0.0])
        return np.linalg.norm(u + pins @ _rotation(r).T - floor, axis=1)

    assert lengths(np.zeros(4)) == pytest.approx(SPREADER["rods"]["lengths"], rel=1e-15)
    rng = np.random.default_rng(5)
    h, worst = 1e-6, 0.0
    for q in poses([0.2, 0.2, 0.3, 0.3], count=20):
        work = lambda x: np.concatenate([setup.strokes(x), -lengths(x)])  # noqa: E731 - what each cell works through
        jacobian = np.column_stack([(work(q + h * e) - work(q - h * e)) / (2 * h) for e in np.eye(4)])
        loads = rng.normal(0.0, 1e5, 6)
        expected = jacobian.T @ loads
        got = setup.dof_forces(q, loads)
        worst = max(worst, float(np.max(np.abs(got - expected)) / np.max(np.abs(expected))))
    print(f"four-actuators-3d with rods: force map vs finite differences, worst relative {worst:.2g}")
    assert worst <= 1e-7


def test_four_actuators_match_openfresco_closed_form() -> None:
    """ESFourActuators3d's nonlinear forward map (rotation A(-alpha) B(beta) C(alpha), alpha = atan(phiy/phix),
    beta = -sign(phix) |phi|; actuators L_i along the rotated axes on links a_i, the upper pair h above),
    written out here; its actuators 1, 2, 3, 4 are this kind's 1, 3, 2, 4."""
    (la, a, h), phi = (OF4["L"], OF4["a"], OF4["h"]), math.radians(OF4["phi"])
    setup = build_setup(SPREADER)
    turn = np.array([[math.cos(phi), math.sin(phi)], [-math.sin(phi), math.cos(phi)]])
    worst = 0.0
    for q in poses([0.2, 0.2, 0.3, 0.3], count=40):
        d = np.concatenate([turn @ q[:2], turn @ q[2:]])
        alpha = math.atan(d[3] / d[2])
        beta = -math.copysign(math.hypot(d[2], d[3]), d[2])
        spin = lambda t: np.array([[math.cos(t), math.sin(t), 0], [-math.sin(t), math.cos(t), 0], [0, 0, 1]])  # noqa
        tilt = np.array([[1, 0, 0], [0, math.cos(beta), math.sin(beta)], [0, -math.sin(beta), math.cos(beta)]])
        links = spin(-alpha) @ tilt @ spin(alpha) @ np.array([[-a[0], 0, -a[2], 0], [0, -a[1], 0, -a[3]],
                                                                [0, 0, h, h]])
        vectors = [(la[0] + d[0] + a[0] + links[0, 0], d[1] + links[1, 0], links[2, 0]),
                   (d[0] + links[0, 1], la[1] + d[1] + a[1] + links[1, 1], links[2, 1]),
                   (la[2] + d[0] + a[2] + links[0, 2], d[1] + links[1, 2], links[2, 2] - h),
                   (d[0] + links[0, 3], la[3] + d[1] + a[3] + links[1, 3], links[2, 3] - h)]
        openfresco = np.array([np.linalg.norm(v) - length for v, length in zip(vectors, la)])
        worst = max(worst, float(np.max(np.abs(openfresco[[0, 2, 1, 3]] - setup.strokes(q)))))
    assert worst <= 1e-14


def test_the_brace_load_cells_enter_the_force_map_by_the_braces_length_changes() -> None:
    """Six readings (Fx, Fy, M per brace); the axial force N_i = e_i . (Fx, Fy)_i works through the brace's
    length l_i: DOF forces = sum N_i dl_i/dq, dl_i/dq the central difference (h = 1e-6) of the brace lengths,
    written out here; the moments do no work (pinned braces), the actuators' load cells are not read."""
    setup = build_setup(BRACED)
    assert setup.cells == 6
    feet, joints = np.array(BRACED["braces"]["feet"]), np.array(BRACED["braces"]["joints"])

    def vectors(q: np.ndarray) -> np.ndarray:
        turn = np.array([[math.cos(q[2]), -math.sin(q[2])], [math.sin(q[2]), math.cos(q[2])]])
        return q[:2] + joints @ turn.T - feet

    rng = np.random.default_rng(6)
    h, worst = 1e-6, 0.0
    for q in poses([0.2, 0.2, 0.4], count=20):
        gradient = np.column_stack([(np.linalg.norm(vectors(q + h * e), axis=1)
                                     - np.linalg.norm(vectors(q - h * e), axis=1)) / (2 * h) for e in np.eye(3)])
        readings = rng.normal(0.0, 1e5, 6)
        v = vectors(q)
        axial = [float(readings[3 * i:3 * i + 2] @ v[i] / np.linalg.norm(v[i])) for i in range(2)]
        expected = gradient.T @ np.array(axial)
        got = setup.dof_forces(q, readings)
        worst = max(worst, float(np.max(np.abs(got - expected)) / np.max(np.abs(expected))))
        shear = np.array([-v[0][1], v[0][0], 7.0, -v[1][1], v[1][0], -3.0])  # across the braces, and moments
        assert np.max(np.abs(setup.dof_forces(q, shear))) <= 1e-9 * np.max(np.abs(shear))
    print(f"inverted-v-brace, brace load cells: force map vs finite differences, worst relative {worst:.2g}")
    assert worst <= 1e-7
