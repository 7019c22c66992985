"""The specification's SDOF (M = 1 kg, K_N = K_E = 2e3 N/m, undamped) and its free vibration, as fixtures."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from hybridsim.coordinator.problems.implicit_rths.methods import ImplicitRthsMethod, RunHistory, SplitStructure, SpecimenLab, run
from hybridsim.coordinator.problems.implicit_rths.methods.reference import exact_reference
from hybridsim.modules.plant.first_order import FirstOrderActuator
from hybridsim.modules.plant.specimens import LinearSpecimen

K_N = K_E = 2e3  # N/m
D0 = 0.01  # m: initial displacement of the free vibration


@pytest.fixture
def sdof() -> SplitStructure:
    return SplitStructure(np.eye(1), np.zeros((1, 1)), np.array([[K_N]]), specimen_dof=0, specimen_stiffness=K_E)


@pytest.fixture
def free_vibration() -> Callable[..., tuple[RunHistory, SpecimenLab]]:
    """Run a method on the SDOF from d_0 = 0.01 m at rest; the lab has a linear specimen K_E."""
    def go(method: ImplicitRthsMethod, steps: int, bandwidth: float = math.inf) -> tuple[RunHistory, SpecimenLab]:
        lab = SpecimenLab(FirstOrderActuator(bandwidth, method.sample_period, D0), LinearSpecimen(K_E))
        return run(method, lab, np.zeros((steps + 1, 1)), np.array([D0]), np.zeros(1)), lab
    return go


@pytest.fixture
def free_vibration_reference(sdof: SplitStructure) -> Callable[[float, int], RunHistory]:
    """The exact reference of the same free vibration at step ``dt`` over ``steps`` steps."""
    def go(dt: float, steps: int) -> RunHistory:
        return exact_reference(sdof, LinearSpecimen(K_E), dt, np.zeros((steps + 1, 1)), np.array([D0]), np.zeros(1))
    return go
