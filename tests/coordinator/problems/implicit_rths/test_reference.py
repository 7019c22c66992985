"""The exact reference against an independent oracle: OpenSees, Newmark 0.5 0.25 with Newton to round-off."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.implicit_rths.cases import Case, build_case

ops = pytest.importorskip("openseespy.opensees")


def opensees_first_story(case: Case, specimen: tuple) -> np.ndarray:
    """First-floor displacement of the five-story building as zeroLength springs and nodal masses."""
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    for node in range(6):
        ops.node(node, 0.0)
    ops.fix(0, 1)
    for node in range(1, 6):
        ops.mass(node, 100.0)
    ops.uniaxialMaterial("Elastic", 1, 40e3)
    ops.uniaxialMaterial("Elastic", 2, 20e3)
    ops.uniaxialMaterial(*specimen)  # tag 3
    ops.element("zeroLength", 1, 0, 1, "-mat", 2, "-dir", 1)  # the numerical half of the first story
    ops.element("zeroLength", 2, 0, 1, "-mat", 3, "-dir", 1)  # the specimen
    for story in range(2, 6):
        ops.element("zeroLength", story + 1, story - 1, story, "-mat", 1, "-dir", 1)
    ground = -case.loads[:, 0] / 100.0  # F = -m a_g
    ops.timeSeries("Path", 1, "-dt", case.dt, "-values", *ground.tolist())
    ops.pattern("UniformExcitation", 1, 1, "-accel", 1)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    ops.test("NormDispIncr", 1e-16, 50)
    ops.algorithm("Newton")
    ops.integrator("Newmark", 0.5, 0.25)
    ops.analysis("Transient")
    out = [0.0]
    for _ in range(case.steps):
        assert ops.analyze(1, case.dt) == 0
        out.append(ops.nodeDisp(1, 1))
    ops.wipe()
    return np.array(out)


def test_linear_building_reference_matches_opensees() -> None:
    case = build_case("M1", short=True)
    ours = case.reference().displacement[:, 0]
    theirs = opensees_first_story(case, ("Elastic", 3, 20e3))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * np.max(np.abs(theirs)))


def test_bilinear_building_reference_matches_opensees_steel01() -> None:
    case = build_case("M2", short=True)
    reference = case.reference()
    ours = reference.displacement[:, 0]
    theirs = opensees_first_story(case, ("Steel01", 3, 160.0, 20e3, 0.115))
    assert np.max(np.abs(ours)) > 3 * 0.008  # it yields
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * np.max(np.abs(theirs)))
    assert np.max(np.abs(reference.specimen_force)) > 160.0
