"""The exact reference: the split structure solved monolithically, with no actuator and no control loop.

Each step solves the equivalent-force equation to round-off with the same
average-acceleration scheme and the same specimen law, committing the
specimen once per step.  For one specimen at DOF e the equation reduces to
a scalar monotone equation in the specimen deformation u:

    d = A^-1 (F_EQ - f(u) u_e),   A = K_PD + K_N
    g(u) = u + c f(u) - b = 0,    c = (A^-1)_ee > 0,  b = (A^-1 F_EQ)_e

Since f is non-decreasing in u, g' >= 1 and the root is unique; it is found
by Newton's method inside a bracket, bisecting when a Newton step leaves
the bracket.
"""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.problems.implicit_rths.methods.base import RunHistory, StepReport
from hybridsim.coordinator.problems.implicit_rths.methods.equivalent_force import EquivalentForceNewmark
from hybridsim.coordinator.problems.implicit_rths.methods.structure import SplitStructure
from hybridsim.modules.plant.specimens import Specimen

RELATIVE_TOLERANCE = 1e-15
MAX_SOLVES = 200


def specimen_deformation(specimen: Specimen, c: float, b: float, guess: float) -> tuple[float, float, int]:
    """Root u (m) of g(u) = u + c f(u) - b, the trial force f(u) (N) there, and the number of evaluations."""
    u = guess
    f, k = specimen.trial(u)
    g = u + c * f - b
    # g' >= 1, so one step of -g from u lands on the other side of the root
    lo, hi = (u, u - g) if g < 0 else (u - g, u)
    for count in range(1, MAX_SOLVES + 1):
        if abs(g) <= RELATIVE_TOLERANCE * max(abs(u), abs(b)) or hi - lo <= RELATIVE_TOLERANCE * max(abs(lo), abs(hi)):
            return u, f, count
        newton = u - g / (1.0 + c * k)
        u = newton if lo < newton < hi else 0.5 * (lo + hi)
        f, k = specimen.trial(u)
        g = u + c * f - b
        if g < 0:
            lo = u
        else:
            hi = u
    raise ArithmeticError(f"the reference solve did not converge in {MAX_SOLVES} evaluations (g = {g:.3g} m)")


def exact_reference(structure: SplitStructure, specimen: Specimen, dt: float, loads: np.ndarray,
                    displacement: np.ndarray, velocity: np.ndarray) -> RunHistory:
    """The monolithic average-acceleration solution over len(loads) - 1 steps; loads F_i in N."""
    newmark = EquivalentForceNewmark(structure.mass, structure.damping, dt)
    a_inv = np.linalg.inv(newmark.k_pd + structure.stiffness)
    e = structure.specimen_dof
    column = a_inv[:, e].copy()
    c = float(a_inv[e, e])
    loads = np.asarray(loads, float)
    d = np.array(displacement, float)
    v = np.array(velocity, float)
    force = specimen.update(float(d[e]))
    rhs = loads[0] - structure.damping @ v - structure.stiffness @ d
    rhs[e] -= force
    a = np.linalg.solve(structure.mass, rhs)
    states = [(d, v, a, force)]
    reports = []
    for load_next in loads[1:]:
        free = a_inv @ newmark.equivalent_force(load_next, d, v, a)
        _, force, count = specimen_deformation(specimen, c, float(free[e]), float(d[e]))
        specimen.commit()
        d_next = free - column * force
        v, a = newmark.rates(d_next, d, v, a)
        d = d_next
        states.append((d, v, a, force))
        reports.append(StepReport(count, ()))
    ds, vs, accs, forces = zip(*states)
    return RunHistory(np.array(ds), np.array(vs), np.array(accs), np.array(forces), tuple(reports))
