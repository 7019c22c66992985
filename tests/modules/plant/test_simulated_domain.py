"""OpenFresco's simulated-domain control: an openseespy specimen driven by actuator elements at its attachment
points (hybridsim.modules.plant.simulated_domain), in hybrid runs against the `opensees` module of the same
model driven at its DOFs.

One actuator in line with the column top: nothing of the rig's geometry is left out of the setup, and the
site is the opensees module to the rounding of the actuator's load cell (stiffness x 1e-16 x length).  Two
actuators, the upper one on a loading arm: the arm is an element of the model, as stiff as it is made, so
the pose the site computes from the strokes (a rigid arm) is off by the arm's deflection, and a stiffer arm
rounds more: that is what driving at the attachment points adds to the DOF drive (docs/setups.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from hybridsim.modules.plant.module import build_lab
from tests.conftest import EXAMPLES
from tests.modules.experimental.test_site_equivalence import difference, pulse, run, site

TOP = 1.5
"""the column's height in examples/setups/column.py (m)"""


def _model(tmp_path: Path, **parameters: float) -> dict:
    shutil.copy(EXAMPLES / "setups" / "column.py", tmp_path / "column.py")
    return {"model": "column.py", "path_independent": True, "parameters": parameters}


def test_one_actuator_at_the_column_top_is_the_opensees_module(tmp_path: Path) -> None:
    model = _model(tmp_path)
    dt = 0.002
    pulse(tmp_path, dt, 1.5, 3.0, 2.0, 1.0)
    numerical = run(tmp_path, ["x"], ["translation"],
                    {"kind": "opensees", "config": {**model, "control": [{"name": "x", "node": 2, "dof": 1}]}},
                    dt, "opensees")
    specimen = {"kind": "opensees", **model, "coordinates": "attachments",
                "attachments": [{"node": 2, "base": [-1.2, TOP]}]}
    hybrid = run(tmp_path, ["x"], ["translation"], site({"kind": "one-actuator", "dof": "x"}, specimen, dt,
                                                         [{"model": "ideal"}]), dt, "site")
    assert np.max(np.abs(numerical.displacement)) > 5e-4
    print(f"one actuator at its attachment point vs opensees module: {difference(hybrid, numerical)}")
    assert max(difference(hybrid, numerical)) <= 1e-8


YIELDING = '''
def build(ops, k0=4.0e5, fy=4.0e3, b=0.05):
    """A bilinear (Steel01) spring from the ground to node 2, which moves along x only."""
    ops.model("basic", "-ndm", 2, "-ndf", 2)
    ops.node(1, 0.0, 0.0)
    ops.node(2, 0.0, 0.0)
    ops.fix(1, 1, 1)
    ops.fix(2, 0, 1)
    ops.uniaxialMaterial("Steel01", 1, fy, k0, b)
    ops.element("zeroLength", 1, 1, 2, "-mat", 1, "-dir", 1)
'''


def test_a_yielding_specimen_sees_each_samples_rounds_as_one_increment(tmp_path: Path) -> None:
    """Steel01 (yield 10 mm) driven past 15 yield displacements by one actuator at its node, path dependent:
    the rounds of a sample approach its stroke from one side, so the material's path is the opensees module's."""
    (tmp_path / "yielding.py").write_text(YIELDING)
    dt = 0.002
    pulse(tmp_path, dt, 3.0, 8.0, 1.0, 0.5)
    control = [{"name": "x", "node": 2, "dof": 1}]
    numerical = run(tmp_path, ["x"], ["translation"], {"kind": "opensees", "config": {"model": "yielding.py",
                                                                                       "control": control}},
                    dt, "opensees")
    specimen = {"kind": "opensees", "model": "yielding.py", "coordinates": "attachments",
                "attachments": [{"node": 2, "base": [-1.2, 0.0], "stiffness": 1e8}]}
    hybrid = run(tmp_path, ["x"], ["translation"], site({"kind": "one-actuator", "dof": "x"}, specimen, dt,
                                                         [{"model": "ideal"}]), dt, "site")
    assert np.max(np.abs(numerical.displacement)) > 0.15
    print(f"yielding specimen at its attachment point vs opensees module: {difference(hybrid, numerical)}")
    assert max(difference(hybrid, numerical)) <= 1e-8


def test_two_actuators_on_a_loading_arm_differ_from_the_dof_drive_by_the_arms_deflection(tmp_path: Path) -> None:
    dt = 0.002
    pulse(tmp_path, dt, 1.0, 3.0, 2.0, 1.0)
    dofs, kinds = ["x", "theta"], ["translation", "rotation"]
    control = [{"name": "x", "node": 2, "dof": 1}, {"name": "theta", "node": 2, "dof": 3}]
    setup = {"kind": "two-actuators-2d", "lengths": [1.2, 1.0], "height": 0.5}
    results = {}
    for arm in (1e11, 1e12):
        model = _model(tmp_path, arm=0.5, arm_EA=arm, arm_EI=arm)
        numerical = run(tmp_path, dofs, kinds, {"kind": "opensees", "config": {**model, "control": control}},
                        dt, "opensees")
        specimen = {"kind": "opensees", **model, "coordinates": "attachments",
                    "attachments": [{"node": 2, "base": [-1.2, TOP]}, {"node": 3, "base": [-1.0, TOP + 0.5]}]}
        hybrid = run(tmp_path, dofs, kinds, site(setup, specimen, dt, [{"model": "ideal"}] * 2), dt, "site")
        results[arm] = difference(hybrid, numerical)
    print(f"two actuators, arm EA = EI = 1e11 / 1e12: relative difference {results}")
    assert max(results[1e12]) <= 1e-7  # the arm's deflection under the upper actuator's load, 10x smaller ...
    assert max(results[1e11]) > 2 * max(results[1e12])  # ... than with an arm 10x softer


def test_the_lab_brings_each_actuator_to_its_stroke(tmp_path: Path) -> None:
    model = _model(tmp_path, arm=0.5, arm_EA=1e12, arm_EI=1e12)
    specimen = {"kind": "opensees", **model, "coordinates": "attachments",
                "attachments": [{"node": 2, "base": [-1.2, TOP]}, {"node": 3, "base": [-1.0, TOP + 0.5]}]}
    lab = build_lab({"dt": 0.001, "dofs": ["a1", "a2"], "actuators": {"model": "ideal"}, "specimen": specimen},
                    tmp_path)
    try:
        strokes = np.array([0.02, -0.01])  # 20 mm and -10 mm: the arm turns by 0.06 rad
        loads = lab.specimen.commit(strokes, 1)
        assert np.max(np.abs(lab.specimen.lengths() - strokes)) <= 1e-13
        assert lab.specimen.rounds < 20  # rounds of k_specimen / k_actuator; 13 from rest to here
        # the column's top: x = 20 mm; its restoring force along x balances both actuators' x components
        assert np.all(np.abs(loads) > 1e3)
    finally:
        lab.close()


@pytest.mark.parametrize("entry, message", [
    ({"node": 9, "base": [-1.2, TOP]}, "specimen.attachments[0].node: the model has no node 9"),
    ({"node": 2, "base": [-1.2, TOP, 0.0]}, "specimen.attachments[0].base: give 2 coordinates"),
])
def test_a_bad_attachment_is_refused_naming_it(tmp_path: Path, entry: dict, message: str) -> None:
    specimen = {"kind": "opensees", **_model(tmp_path), "coordinates": "attachments", "attachments": [entry]}
    with pytest.raises(Exception, match=message.replace("[", r"\[").replace("]", r"\]")):
        build_lab({"dt": 0.001, "dofs": ["a1"], "actuators": {"model": "ideal"}, "specimen": specimen}, tmp_path)


def test_an_inverted_v_brace_read_by_its_braces_load_cells_is_the_opensees_module(tmp_path: Path) -> None:
    """The braces' feet are the load cells (Fx, Fy, M each, setup braces): the site's forces are the braces'
    axial forces through their length changes; against the opensees module of the same braces driven at the
    apex (x, y, theta).  The loading beam is an element of the model: the site's pose of a rigid beam is off by
    the beam's axial shortening between the horizontal actuator and the apex under the braces' load, 1/EA
    (2.25e-5, 2.25e-6, 2.25e-7, 2.25e-8 with EA = EI = 1e12 .. 1e15; 2.4e-9 with EA = 1e16 whatever EI, 2.25e-8
    with EA = 1e15, EI = 1e16): braces.py's beam, EA = 1e16, leaves 2.4e-9 in x and 2.3e-9 in the forces.

    theta is a mechanism in both: pinned braces, a beam with free ends.  The site's restoring moment is the
    braces' forces about the apex they pass through (0 here); the opensees module's is OpenSees' roundoff of the
    beam's end moments, about 1.5e-23 x EI (1.4e-8, 1.5e-7, 1.2e-6 N m with EI = 1e15, 1e16, 1e17), and with no
    stiffness against it the 40 kg m^2 DOF drifts by its integral (1e-11 rad, 1.8e-8 of the x peak, on one machine;
    3.2e-9 where this test was written: the roundoff's pattern is the machine's, its size is not).  So theta is
    held to what such a moment can do to a free rotor from rest (damping only takes away), max|M| t^2 / (2 I)."""
    shutil.copy(EXAMPLES / "setups" / "braces.py", tmp_path / "braces.py")
    dt, duration, inertia = 0.002, 1.0, 40.0
    pulse(tmp_path, dt, duration, 3.0, 2.0, 1.0)
    dofs, kinds = ["x", "y", "theta"], ["translation", "translation", "rotation"]
    model = {"model": "braces.py", "path_independent": True}
    control = [{"name": n, "node": 1, "dof": i} for i, n in enumerate(dofs, 1)]
    numerical = run(tmp_path, dofs, kinds, {"kind": "opensees", "config": {**model, "control": control}}, dt,
                    "opensees")
    setup = {"kind": "inverted-v-brace", "lengths": [1.5, 1.2, 1.2], "half_span": 0.8,
             "braces": {"feet": [[-1.5, -2.0], [1.5, -2.0]]}}
    specimen = {"kind": "opensees", **model, "coordinates": "attachments", "reaction_cells": [11, 12],
                "attachments": [{"node": 2, "base": [-2.3, 0.0]}, {"node": 2, "base": [-0.8, -1.2]},
                                {"node": 3, "base": [0.8, -1.2]}]}
    hybrid = run(tmp_path, dofs, kinds, site(setup, specimen, dt, [{"model": "ideal"}] * 3), dt, "site")
    peak = np.max(np.abs(numerical.displacement))
    assert np.max(np.abs(numerical.displacement[:, 0])) > 5e-4
    translations = np.max(np.abs(hybrid.displacement[:, :2] - numerical.displacement[:, :2])) / peak
    forces = difference(hybrid, numerical)[1]
    theta = np.max(np.abs(hybrid.displacement[:, 2] - numerical.displacement[:, 2])) / peak
    rotor = np.max(np.abs(numerical.restoring_force[:, 2])) * duration ** 2 / (2 * inertia) / peak
    print(f"inverted-V brace, brace load cells, at the attachment points vs opensees module: x, y {translations:.3g}, "
          f"forces {forces:.3g}, theta {theta:.3g} (free-rotor bound of the module's roundoff moment {rotor:.3g})")
    assert max(translations, forces) <= 1e-8
    assert theta <= rotor
    moment = np.max(np.abs(numerical.restoring_force[:, 2]))  # a roundoff, not a moment of the braces: less
    assert moment <= np.max(np.abs(numerical.restoring_force[:, 0])) * 1e-9  # than theirs 1 nm off the apex


def test_a_rewind_replays_the_committed_strokes_of_a_yielding_specimen(tmp_path: Path) -> None:
    (tmp_path / "yielding.py").write_text(YIELDING)
    specimen = {"kind": "opensees", "model": "yielding.py", "coordinates": "attachments",
                "attachments": [{"node": 2, "base": [-1.2, 0.0], "stiffness": 1e8}]}
    lab = build_lab({"dt": 0.001, "dofs": ["a1"], "actuators": {"model": "ideal"}, "specimen": specimen}, tmp_path)
    try:
        domain = lab.specimen
        domain.commit(np.array([0.03]), 1)  # 3 yield displacements
        state = domain.state()
        first = domain.commit(np.array([-0.01]), 2)  # unloading, then yielding the other way
        domain.commit(np.array([0.05]), 3)
        domain.set_state(state)  # a rewind: rebuilt and the committed path replayed
        np.testing.assert_allclose(domain.commit(np.array([-0.01]), 2), first, rtol=1e-12)
        assert first[0] == pytest.approx(-0.01 * 0.05 * 4e5 - 0.95 * 4e3, rel=1e-9)  # on the lower bound line
    finally:
        lab.close()
