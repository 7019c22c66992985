"""Implicit real-time hybrid simulation: three methods that solve the implicit Newmark equation while
the actuator moves, driven one control sample at a time (see ``base``).

- :class:`ShingMethod`: Shing et al.'s fixed number of iterations, one per control sample;
- :class:`EfcmMethod`: the equivalent force control method (a force feedback loop);
- :class:`NcdcMethod`: nearly-complete delay compensation with back-search of the measured data.

:func:`exact_reference` solves the same structure monolithically.  The
benchmark specification is ``benchmarks/implicit_rths/SPEC.md`` of the
shared benchmarks (Wang, Liu, Wu, Xu 2015).
"""

from hybridsim.coordinator.problems.implicit_rths.methods.base import ImplicitRthsMethod, RunHistory, StepReport, run
from hybridsim.coordinator.problems.implicit_rths.methods.efcm import EfcmMethod
from hybridsim.coordinator.problems.implicit_rths.methods.ncdc import NcdcMethod
from hybridsim.coordinator.problems.implicit_rths.methods.reference import exact_reference
from hybridsim.coordinator.problems.implicit_rths.methods.shing import ShingMethod
from hybridsim.coordinator.problems.implicit_rths.methods.site import ControlSite, Measurement, SpecimenLab
from hybridsim.coordinator.problems.implicit_rths.methods.structure import SplitStructure

__all__ = ["ControlSite", "EfcmMethod", "ImplicitRthsMethod", "Measurement", "NcdcMethod", "RunHistory",
           "ShingMethod", "SpecimenLab", "SplitStructure", "StepReport", "exact_reference", "run"]
