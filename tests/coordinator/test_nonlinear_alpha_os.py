"""alpha-OS on nonlinear springs: stable and accurate when softening, the documented limit when stiffening.

Oracle for the softening case: OpenSees, a Steel01 zeroLength SDOF (E0 = k0, Fy = k0 u_y, b, no isotropic
hardening) under Newmark average acceleration with Newton iterations at a 10x finer step.
"""

from __future__ import annotations

import math

import numpy as np
import openseespy.opensees as ops
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import MARTHS_DATA

MASS, K0, UY, B = 1000.0, 4.0e5, 0.005, 0.05  # f = 3.18 Hz, yield at 5 mm, 5 % post-yield


def sdof(spring: dict, dt: float, integrator: dict, scale: float = 1.0, duration: float = 15.0) -> dict:
    return {
        "experiment": {"name": "spring", "dt": dt, "duration": duration},
        "structure": {"dofs": ["x"], "mass_diagonal": [MASS], "influence": [1.0],
                      "damping": {"rayleigh": [0.4, 0.0]}},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": scale},
        "integrator": integrator,
        "modules": [{"name": "spring", "kind": "spring", "config": {"dofs": ["x"], **spring}}],
    }


def opensees_bilinear_sdof(record: np.ndarray, record_dt: float, dt: float, steps: int) -> np.ndarray:
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(1, 0.0)
    ops.node(2, 0.0)
    ops.fix(1, 1)
    ops.mass(2, MASS)
    ops.uniaxialMaterial("Steel01", 1, K0 * UY, K0, B)
    ops.element("zeroLength", 1, 1, 2, "-mat", 1, "-dir", 1)
    ops.rayleigh(0.4, 0.0, 0.0, 0.0)
    ops.timeSeries("Path", 1, "-dt", record_dt, "-values", *record)
    ops.pattern("UniformExcitation", 1, 1, "-accel", 1)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    ops.test("NormDispIncr", 1e-12, 50)
    ops.algorithm("Newton")
    ops.integrator("Newmark", 0.5, 0.25)
    ops.analysis("Transient")
    out = np.zeros(steps + 1)
    for n in range(1, steps + 1):
        assert ops.analyze(1, dt) == 0
        out[n] = ops.nodeDisp(2, 1)
    ops.wipe()
    return out


def test_alpha_os_follows_opensees_on_a_yielding_bilinear_spring(tmp_path):
    spring = {"law": "bilinear", "stiffness": K0, "yield_displacement": UY, "hardening_ratio": B}
    table = sdof(spring, 0.002, {"kind": "alpha-os", "alpha": -0.05})
    experiment = parse_experiment(table, base_dir=tmp_path)
    result = run_experiment(experiment, output=tmp_path / "bilinear.h5")
    x = result["x"]
    reference = opensees_bilinear_sdof(experiment.motion.acceleration, experiment.dt, experiment.dt / 10,
                                       experiment.steps * 10)[::10]
    peak = np.max(np.abs(reference))
    assert peak > 3 * UY  # the spring really yields
    assert np.max(np.abs(x - reference)) / peak < 0.02
    # the permanent offset after yielding is reproduced too
    assert x[-1] == pytest.approx(reference[-1], abs=0.02 * peak)


def test_alpha_os_is_stable_on_softening_but_not_on_stiffening_springs_at_a_large_step(tmp_path):
    """Combescure & Pegon: alpha-OS is unconditionally stable if the tangent stays below K_I.

    A stiffening spring breaks that condition: with the tangent at 1 + 3 (y/y_ref)^2 times K_I the
    excess stiffness is integrated explicitly, and a step that is fine for K_I (omega_I dt = 0.8)
    diverges once omega_t dt passes 2, i.e. y > 1.32 y_ref.  This is the documented limitation.
    """
    dt, k_initial = 0.02, MASS * (0.8 / 0.02) ** 2
    soft = {"law": "bilinear", "stiffness": k_initial, "yield_displacement": 0.001, "hardening_ratio": B}
    hard = {"law": "stiffening", "stiffness": k_initial, "reference_displacement": 0.001}
    peaks = {}
    for name, spring in (("softening", soft), ("stiffening", hard)):
        experiment = parse_experiment(sdof(spring, dt, {"kind": "alpha-os", "alpha": -0.05}, duration=12.0),
                                      base_dir=tmp_path)
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                peaks[name] = np.max(np.abs(run_experiment(experiment, output=tmp_path / f"{name}.h5")["x"]))
        except RunStopped as exc:  # the blow-up reaches the module as a non-finite command, which it refuses
            assert "non-finite" in str(exc)
            peaks[name] = math.inf
    assert peaks["softening"] < 0.05  # bounded: millimetres to centimetres under El Centro
    assert peaks["stiffening"] > 1e3 * peaks["softening"]  # diverged


def test_newmark_iterates_a_yielding_spring_to_the_opensees_newton_solution(tmp_path):
    """The same scheme (average acceleration) solved to equilibrium at every step: our modified Newton with
    K_I over module trials and OpenSees' Newton must converge to the same response at the same dt."""
    spring = {"law": "bilinear", "stiffness": K0, "yield_displacement": UY, "hardening_ratio": B}
    table = sdof(spring, 0.005, {"kind": "newmark", "tolerance": 1e-12, "max_iterations": 200})
    experiment = parse_experiment(table, base_dir=tmp_path)
    result = run_experiment(experiment, output=tmp_path / "newmark.h5")
    reference = opensees_bilinear_sdof(experiment.motion.acceleration, experiment.dt, experiment.dt,
                                       experiment.steps)
    peak = np.max(np.abs(reference))
    assert peak > 3 * UY
    # the last sample is left out: OpenSees' Path series gives 0 at its own end time
    assert np.max(np.abs(result["x"][:-1] - reference[:-1])) / peak < 1e-9
    stats = result.summary["modules"]["spring"]
    assert stats["proposed"] > 1.2 * stats["committed"]  # yielding steps needed more than one trial
