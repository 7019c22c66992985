"""Two excitation components on a two-DOF structure against one OpenSees model with two UniformExcitation
patterns (openseespy as the oracle), and PEER .AT2 files read in both header layouts."""

from __future__ import annotations

import math
from pathlib import Path
import tomllib

import numpy as np
import openseespy.opensees as ops
import pytest

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.motion import STANDARD_GRAVITY, read_at2
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import resume_run, run_experiment
from hybridsim.shipped import resolve

ACCELERATION = np.loadtxt(resolve("hybridsim:marths/ground_motion_elcentro.csv", Path(".")), delimiter=",", skiprows=1)[:, 1]
"""El Centro (m/s^2) at 0.02 s"""
SEGMENT = ACCELERATION[249:450]
"""the first component: 4 s of its strong motion (from its last zero before t = 5 s: OpenSees starts at rest with
no acceleration, the coordinator from M a0 = f0), written as an .AT2 file in g"""
SECOND = ACCELERATION[270:]
"""the second component: the record from t = 5.4 s, written as a CSV file (m/s^2)"""
M, EA, L = 1000.0, 2.0e5, 1.0
"""kg at the free node in x and y; N and m of the three bars to its fixed neighbours"""
BARS = ((L, 0.0), (0.0, L), (L, L))
ALPHA, SCALE, START, DURATION, MASS_DAMPING = -0.05, 0.7, 0.5, 3.0, 0.4


def bar_stiffness() -> np.ndarray:
    """K = sum EA/l n n^T over the bars from the free node at the origin (N/m)."""
    k = np.zeros((2, 2))
    for x, y in BARS:
        length = math.hypot(x, y)
        n = np.array([x, y]) / length
        k += EA / length * np.outer(n, n)
    return k


def write_at2(path, values_g: np.ndarray, dt: float, west1: bool = False) -> None:
    header = f"{len(values_g)}    {dt:.4f}    NPTS, DT" if west1 else f"NPTS=  {len(values_g)}, DT=   {dt:.4f} SEC"
    rows = [" ".join(f"{v:.17e}" for v in values_g[i:i + 5]) for i in range(0, len(values_g), 5)]
    path.write_text("\n".join(["PEER NGA STRONG MOTION DATABASE RECORD", "a test record, El Centro's segment",
                               "ACCELERATION TIME SERIES IN UNITS OF G", header, *rows]) + "\n")


def write_csv(path, values: np.ndarray, dt: float) -> None:
    np.savetxt(path, np.column_stack([dt * np.arange(values.size), values]), delimiter=",", fmt="%.17g")


def experiment_text(at2, csv) -> str:
    k = bar_stiffness()
    return f"""
[experiment]
name = "two-components"
dt = 0.01
duration = {DURATION}
[structure]
dofs = ["x", "y"]
mass_diagonal = [{M}, {M}]
damping = {{ rayleigh = [{MASS_DAMPING}, 0.0] }}
[[excitation]]
name = "H1"
file = "{at2}"
influence_dofs = ["x"]
[[excitation]]
name = "H2"
file = "{csv}"
influence = [0.0, 1.0]
scale = {SCALE}
start_s = {START}
[integrator]
kind = "alpha-os"
alpha = {ALPHA}
[[modules]]
name = "bars"
kind = "linear"
config = {{ dofs = ["x", "y"], stiffness = {k.tolist()} }}
"""


def opensees_two_patterns(steps: int, dt: float) -> np.ndarray:
    """The free node's (x, y) displacements (m) under both components, each its own UniformExcitation."""
    ops.wipe()
    ops.model("basic", "-ndm", 2, "-ndf", 2)
    ops.node(1, 0.0, 0.0)
    ops.mass(1, M, M)
    ops.uniaxialMaterial("Elastic", 1, EA)
    for i, (x, y) in enumerate(BARS, start=2):
        ops.node(i, x, y)
        ops.fix(i, 1, 1)
        ops.element("truss", i, 1, i, 1.0, 1)
    ops.rayleigh(MASS_DAMPING, 0.0, 0.0, 0.0)
    ops.timeSeries("Path", 1, "-dt", 0.02, "-values", *SEGMENT)
    # the second record at the analysis step (linear interpolation, as OpenSees' Path does), zero up to its start
    fine = np.interp(dt * np.arange(2 * SECOND.size - 1), 0.02 * np.arange(SECOND.size), SECOND)
    ops.timeSeries("Path", 2, "-dt", dt, "-values", *np.r_[np.zeros(round(START / dt)), SCALE * fine])
    ops.pattern("UniformExcitation", 1, 1, "-accel", 1)
    ops.pattern("UniformExcitation", 2, 2, "-accel", 2)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    ops.algorithm("Linear")
    ops.integrator("AlphaOS", 1.0 + ALPHA)
    ops.analysis("Transient")
    out = np.zeros((steps + 1, 2))
    for n in range(1, steps + 1):
        assert ops.analyze(1, dt) == 0
        out[n] = [ops.nodeDisp(1, 1), ops.nodeDisp(1, 2)]
    ops.wipe()
    return out


def test_two_components_match_one_opensees_model_with_two_uniform_excitations(tmp_path):
    write_at2(tmp_path / "H1.AT2", SEGMENT / STANDARD_GRAVITY, 0.02)
    write_csv(tmp_path / "H2.csv", SECOND, 0.02)
    experiment = parse_experiment(tomllib.loads(experiment_text(tmp_path / "H1.AT2", tmp_path / "H2.csv")),
                                  base_dir=tmp_path)
    result = run_experiment(experiment, output=tmp_path / "run.h5")
    reference = opensees_two_patterns(experiment.steps, experiment.dt)
    difference = np.max(np.abs(result.displacement - reference)) / np.max(np.abs(reference))
    print(f"two components vs OpenSees' two UniformExcitation patterns: max relative difference {difference:.2e}")
    assert experiment.steps == round(DURATION / 0.01)
    assert difference < 1e-9
    assert np.min(np.max(np.abs(reference), axis=0)) > 1e-3  # both directions move (millimetres), coupled by the bar
    peaks = result.summary["excitation"]
    in_run = SECOND[:round((DURATION - START) / 0.02) + 1]
    assert math.isclose(peaks["H1"]["peak"], np.max(np.abs(SEGMENT[:round(DURATION / 0.02) + 1])), rel_tol=1e-12)
    assert math.isclose(peaks["H2"]["peak"], SCALE * np.max(np.abs(in_run)), rel_tol=1e-12)
    assert peaks["H2"]["start_s"] == START
    stored = read_results(tmp_path / "run.h5")
    assert stored["ground_components"].shape == (experiment.steps + 1, 2)
    assert np.array_equal(stored["ground_components"][:, 0], stored["ground_acceleration"])
    import h5py

    with h5py.File(tmp_path / "run.h5") as f:
        assert list(f["ground_components"].attrs["dofs"]) == ["H1", "H2"]


def test_an_at2_file_reads_alike_in_both_peer_header_layouts(tmp_path):
    write_at2(tmp_path / "west2.AT2", SEGMENT / STANDARD_GRAVITY, 0.02)
    write_at2(tmp_path / "west1.AT2", SEGMENT / STANDARD_GRAVITY, 0.02, west1=True)
    west2, west1 = read_at2(tmp_path / "west2.AT2"), read_at2(tmp_path / "west1.AT2")
    assert west2.dt == west1.dt == 0.02
    assert np.allclose(west2.acceleration, SEGMENT, rtol=1e-15, atol=1e-15)
    assert np.array_equal(west1.acceleration, west2.acceleration)


def test_a_two_component_run_stopped_and_resumed_ends_bit_for_bit_as_the_uninterrupted_one(tmp_path):
    from hybridsim.coordinator.errors import RunStopped
    from tests.coordinator.test_resume import aborted_at

    write_at2(tmp_path / "H1.AT2", SEGMENT / STANDARD_GRAVITY, 0.02)
    write_csv(tmp_path / "H2.csv", SECOND, 0.02)
    table = tomllib.loads(experiment_text(tmp_path / "H1.AT2", tmp_path / "H2.csv"))
    whole = run_experiment(parse_experiment(table, base_dir=tmp_path), output=tmp_path / "whole.h5")
    table["output"] = {"file": str(tmp_path / "broken.h5"), "checkpoint_every": 100}
    control, listener = aborted_at(130)
    with pytest.raises(RunStopped):
        run_experiment(parse_experiment(table, base_dir=tmp_path), control=control, listeners=[listener])
    resumed = resume_run(tmp_path / "broken.h5")
    np.testing.assert_array_equal(resumed.displacement, whole.displacement)
    np.testing.assert_array_equal(read_results(tmp_path / "broken.h5")["ground_components"],
                                  read_results(tmp_path / "whole.h5")["ground_components"])
