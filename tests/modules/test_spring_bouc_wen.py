"""The spring module's Bouc-Wen law against OpenSees' BoucWen uniaxial material (no degradation), driven along
the same cyclic path through openseespy's material tester; and as a virtual specimen, the same as the spring
module in a hybrid run."""

from __future__ import annotations

import numpy as np
import openseespy.opensees as ops
import pytest

from hybridsim.modules.spring import BoucWenSpecimen, build_specimen

LAW = {"law": "bouc-wen", "stiffness": 2.0e5, "post_yield_ratio": 0.05, "exponent": 2.0, "gamma": 5000.0,
       "beta": 5000.0}  # gamma, beta in 1/m^n: z yields at (1 / (beta + gamma))^(1/n) = 10 mm


def test_bouc_wen_follows_opensees_boucwen_along_a_cyclic_path() -> None:
    path = 0.04 * np.linspace(0.0, 1.0, 600) * np.sin(np.linspace(0.0, 6 * np.pi, 600))  # m, to +-40 mm
    spring = build_specimen(LAW)
    assert isinstance(spring, BoucWenSpecimen)
    ops.wipe()
    ops.uniaxialMaterial("BoucWen", 1, LAW["post_yield_ratio"], LAW["stiffness"], LAW["exponent"], LAW["gamma"],
                         LAW["beta"], 1.0, 0.0, 0.0, 0.0)
    ops.testUniaxialMaterial(1)
    ours, theirs = [], []
    for y in path[1:]:
        ops.setStrain(float(y))  # commits, as a lab's specimen does every sample
        theirs.append(ops.getStress())
        ours.append(spring.update(float(y)))
    ops.wipe()
    ours, theirs = np.array(ours), np.array(theirs)
    assert np.max(np.abs(theirs)) > 0.95 * 0.95 * LAW["stiffness"] * 0.01  # z near its yield value 10 mm
    print(f"bouc-wen vs OpenSees BoucWen: max |difference| {np.max(np.abs(ours - theirs)):.2e} N of "
          f"{np.max(np.abs(theirs)):.0f} N")
    assert np.max(np.abs(ours - theirs)) <= 1e-9 * np.max(np.abs(theirs))


def test_a_bad_bouc_wen_law_is_refused() -> None:
    from hybridsim.wire.contract import ModuleError

    with pytest.raises(ModuleError, match="bouc-wen spring needs stiffness > 0"):
        build_specimen({**LAW, "post_yield_ratio": 1.5})
    with pytest.raises(ModuleError, match="law 'bouc-wen' needs key 'gamma'"):
        build_specimen({k: v for k, v in LAW.items() if k != "gamma"})
