"""The five-story shear building of examples/shear_building.toml in OpenSees, under one of OpenSees' own
integrators (openseespy as the oracle for the coordinator's schemes).

100 kg and 40 kN/m per story (zeroLength springs, nodal masses; ``yield_force`` > 0: Steel01 springs
with 2 % hardening instead, ``HARDENING``), 2 % Rayleigh damping at modes 1 and 3 on the initial stiffness, the record
given unresampled (OpenSees' Path series interpolates linearly, as the coordinator does).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import openseespy.opensees as ops

STORY_STIFFNESS = 40.0e3
FLOOR_MASS = 100.0
HARDENING = 0.02
"""Steel01's post-yield stiffness ratio b of the yielding building"""
LINEAR, NEWTON_INITIAL = ("Linear",), ("Newton", "-initial")
INTEGRATORS: dict[str, tuple[tuple[object, ...], tuple[object, ...], tuple[object, ...]]] = {
    # the study's scheme: OpenSees' integrator, its algorithm and convergence test
    "alpha-os(-0.05)": (("AlphaOS", 0.95), LINEAR, ()),
    "generalized-alpha-os(0.5)": (("AlphaOSGeneralized", 0.5), LINEAR, ()),
    "cr": (("KRAlphaExplicit", 1.0), LINEAR, ()),
    "kr-alpha(0.5)": (("KRAlphaExplicit", 0.5), LINEAR, ()),
    "newmark": (("Newmark", 0.5, 0.25), ("Newton",), ("NormDispIncr", 1e-12, 50)),
    "hht-fixed-iterations(0.5)": (("HHTHSFixedNumIter", 0.5), NEWTON_INITIAL, ("FixedNumIter", 2)),
    "central-difference": (("NewmarkExplicit", 0.5), LINEAR, ()),
    "newmark-explicit(0.6)": (("NewmarkExplicit", 0.6), LINEAR, ()),
    "hht-explicit(-0.1, 0.7)": (("HHTExplicit", 0.9, 0.7), LINEAR, ()),
}


def shear_building(motion_dt: float, acceleration: np.ndarray, dt: float, steps: int,
                   integrator: Sequence[object], rayleigh: tuple[float, float], *,
                   algorithm: Sequence[object] = ("Linear",), test: Sequence[object] = (),
                   yield_force: float = 0.0) -> np.ndarray:
    """Floor displacements (steps+1 x 5) under ``ops.integrator(*integrator)``."""
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    for i in range(6):
        ops.node(i, 0.0)
    ops.fix(0, 1)
    if yield_force:
        ops.uniaxialMaterial("Steel01", 1, yield_force, STORY_STIFFNESS, HARDENING)
    else:
        ops.uniaxialMaterial("Elastic", 1, STORY_STIFFNESS)
    for i in range(1, 6):
        ops.mass(i, FLOOR_MASS)
        ops.element("zeroLength", i, i - 1, i, "-mat", 1, "-dir", 1, "-doRayleigh", 1)
    ops.rayleigh(rayleigh[0], 0.0, rayleigh[1], 0.0)
    ops.timeSeries("Path", 1, "-dt", motion_dt, "-values", *acceleration)
    ops.pattern("UniformExcitation", 1, 1, "-accel", 1)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    if test:
        ops.test(*test)
    ops.algorithm(*algorithm)
    ops.integrator(*integrator)
    ops.analysis("Transient")
    out = np.zeros((steps + 1, 5))
    for n in range(1, steps + 1):
        assert ops.analyze(1, dt) == 0
        out[n] = [ops.nodeDisp(i, 1) for i in range(1, 6)]
    ops.wipe()
    return out
