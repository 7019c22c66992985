"""The maRTHS frame in OpenSees against the benchmark's SAP2000 matrices (the data are the oracle).

Targets of the issue: the first five frequencies within 1 % of the published
2.2913, 12.7480, 26.2803, 26.5352, 29.9124 Hz and the condensed floor
stiffness within 2 %.  The identified model reaches round-off of the data
(1e-7), so the tests hold it to 1e-6.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openseespy.opensees as ops
import pytest

from hybridsim.coordinator.problems.marths.data import reference_matrices
from hybridsim.wire.contract import Command, Session
from hybridsim.modules.opensees import OpenSeesModule, domain
from hybridsim.modules.opensees.models import marths_frame
from hybridsim.coordinator.problems.marths.identify import floor_stiffness, frequencies, opensees_stiffness

PUBLISHED_HZ = np.array([2.2913, 12.7480, 26.2803, 26.5352, 29.9124])  # SPEC 17.1
MODEL = Path(marths_frame.__file__)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    stiffness, mass = reference_matrices()
    return stiffness, np.diag(mass)


@pytest.fixture(scope="module")
def parts() -> dict[str, np.ndarray]:
    """Stiffness of every part at the 29 SAP2000 DOFs, measured through the opensees module."""
    return {part: opensees_stiffness(part) for part in ("reference", "numerical", "bay", "lower", "upper")}


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def test_reference_frame_has_the_benchmark_stiffness(parts, data) -> None:
    stiffness, _ = data
    assert relative(parts["reference"], stiffness) < 1e-6
    floors = floor_stiffness(parts["reference"])
    np.testing.assert_allclose(floors, floor_stiffness(stiffness), rtol=1e-6)
    assert floors[0, 0] == pytest.approx(1.791034e8, rel=1e-6)  # floor 1 with every other DOF condensed, N/m


def test_reference_frame_has_the_published_frequencies(parts, data) -> None:
    stiffness, masses = data
    model = frequencies(parts["reference"], masses)
    np.testing.assert_allclose(model, PUBLISHED_HZ, rtol=1e-4)       # published to 4-5 digits
    np.testing.assert_allclose(model, frequencies(stiffness, masses), rtol=1e-6)


def test_opensees_eigen_of_the_model_file_gives_the_published_frequencies() -> None:
    with domain.held("eigen test"):
        domain.build_model(domain.load_builder(MODEL), {}, MODEL)
        hz = np.sqrt(ops.eigen("-fullGenLapack", 5)) / (2 * np.pi)
    np.testing.assert_allclose(hz, PUBLISHED_HZ, rtol=1e-4)


def test_parts_add_up_to_the_reference_frame(parts, data) -> None:
    stiffness, _ = data
    assert relative(parts["numerical"] + parts["bay"], stiffness) < 1e-6
    assert relative(parts["lower"] + parts["upper"] + parts["bay"], stiffness) < 1e-6
    # the numerical substructure has no DOF at the portal's pinned bases (SAP2000 equations 18, 19)
    assert not parts["numerical"][17:19].any() and parts["bay"][17:19].any()


def test_bay_sway_stiffness_is_the_propped_timoshenko_column_alone() -> None:
    """Joints 6, 7 held, bases free to rotate: column 3-7 gives 12EI/(L^3 (4 + Phi)), column 2-6 nothing.

    Column 2-6 is released 1.125 in below joint 6 and pinned at its base, a
    pin-ended strut; S3x5.7: I = 2.50 in^4, As = 3.00 x 0.170 in^2, E = 29000 ksi, nu = 0.3.
    """
    inch, e = 0.0254, 29000 * 6.894757293168e6
    inertia, shear_area, length = 2.50 * inch**4, 0.51 * inch**2, 0.635
    phi = 12 * e * inertia / (e / 2.6 * shear_area * length**2)
    controls = [{"name": "x", "node": 6, "dof": 1}] + [
        {"name": f"J{j}.{d}", "node": j, "dof": k} for j in (6, 7) for d, k in (("z", 2), ("theta", 3))]
    module = OpenSeesModule.from_config({"model": str(MODEL), "control": controls, "parameters": {"part": "bay"}})
    try:
        module.open(Session(dt=1.0, dof_names=module.describe().dof_names))
        module.propose(0, Command(0.0, np.array([1e-4, 0, 0, 0, 0])))
        force = module.execute(0).force
    finally:
        module.close()
    assert force[0] / 1e-4 == pytest.approx(12 * e * inertia / (length**3 * (4 + phi)), rel=1e-9)
