"""Linear and bilinear (kinematic hardening) specimens: hand-derived points and OpenSees Steel01."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.modules.plant.specimens import BilinearSpecimen, LinearSpecimen

K0, UY, B = 20e3, 0.008, 0.115  # the building's bilinear specimen: f_y = 160 N, post-yield 2300 N/m


def walk(specimen: BilinearSpecimen, start: float, end: float, samples: int = 400) -> list[float]:
    return [specimen.update(y) for y in np.linspace(start, end, samples + 1)[1:]]


def test_linear_specimen() -> None:
    spring = LinearSpecimen(2e3)
    assert spring.update(0.01) == pytest.approx(20.0)
    assert spring.trial(-0.003) == pytest.approx((-6.0, 2e3))


def test_bilinear_monotonic_loading_unloading_and_reloading_by_hand() -> None:
    spring = BilinearSpecimen(K0, UY, B)
    assert spring.yield_force == pytest.approx(160.0)
    walk(spring, 0.0, 0.004)
    assert spring.committed[1] == pytest.approx(80.0)  # elastic: k0 y
    walk(spring, 0.004, 0.016)
    assert spring.committed[1] == pytest.approx(178.4)  # f_y + b k0 (y - u_y) = 160 + 2300 * 0.008
    walk(spring, 0.016, 0.001)
    # elastic unloading: 178.4 - k0 (0.016 - y) stays above the lower bound 2300 y - 141.6 down to y = 0
    assert spring.committed[1] == pytest.approx(178.4 - K0 * 0.015)
    assert spring.trial(0.001)[1] == pytest.approx(K0)
    walk(spring, 0.001, -0.004)
    assert spring.committed[1] == pytest.approx(2300 * -0.004 - 141.6)  # on the lower bound: -150.8 N
    assert spring.trial(-0.005)[1] == pytest.approx(B * K0)


def test_trial_does_not_commit() -> None:
    spring = BilinearSpecimen(K0, UY, B)
    spring.trial(0.05)
    assert spring.trial(0.004)[0] == pytest.approx(80.0)  # still elastic from (0, 0)
    spring.trial(0.05)
    spring.commit()
    assert spring.committed == pytest.approx((0.05, 160.0 + 2300 * 0.042))


def test_bilinear_matches_opensees_steel01_on_a_random_path() -> None:
    ops = pytest.importorskip("openseespy.opensees")
    ops.wipe()
    ops.uniaxialMaterial("Steel01", 1, K0 * UY, K0, B)
    ops.testUniaxialMaterial(1)
    rng = np.random.default_rng(7)
    path = np.cumsum(rng.normal(0.0, 0.002, 600))
    spring = BilinearSpecimen(K0, UY, B)
    ours, theirs = [], []
    for y in path:
        ours.append(spring.update(float(y)))
        ops.setStrain(float(y))
        theirs.append(ops.getStress())
    ops.wipe()
    assert np.max(np.abs(path)) > 3 * UY  # the path yields in both directions
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * K0 * UY)


@pytest.mark.parametrize("args", [(0.0, UY, B), (K0, 0.0, B), (K0, UY, 1.0), (K0, UY, -0.1)])
def test_bad_parameters_are_refused(args: tuple[float, float, float]) -> None:
    with pytest.raises(ValueError):
        BilinearSpecimen(*args)
