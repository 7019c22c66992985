"""The maRTHS reference frame (Condori Uribe et al. 2023) as an OpenSees model, whole or in parts.

Geometry.  A plane steel frame of 3 stories x 3 bays, bays 0.762 m, stories
0.635 m.  Node tags are the SAP2000 joint numbers of ``joint_dof.csv``:
joints 1-4 are the bases (left to right), 5-8 floor 1, 9-12 floor 2 and 13-16
floor 3.  Joints 1 and 4 are fixed, joints 2 and 3 pinned.  Each floor is a
rigid diaphragm in x, as in SAP2000: ``equalDOF`` ties the x displacement of
its joints to joints 6, 10 and 14.  Rotations are OpenSees' (counter-clockwise
positive): SAP2000's Ry = -theta.

Members, identified from ``K_matrix.csv`` by ``hybridsim.coordinator.problems.marths.identify`` (run it to
see the numbers).  The benchmark's 29 x 29 stiffness is *exactly* an assembly
of 2-D members on this geometry (relative Frobenius residual 3e-15), whose
basic stiffnesses are those of Timoshenko beams, E = 29000 ksi, nu = 0.3,
with the AISC properties below: SAP2000 includes shear deformation by
default (shear area d*tw for I shapes).  That is why Euler-Bernoulli fits
miss the first frequencies (best fit: 2.131 and 11.08 Hz, -7 % and -13 %):
the W5x16 columns have Phi = 12EI/(G As L^2) = 0.89.  The middle first-story
bay (the benchmark's physical portal, joints 2, 3, 6, 7) has S3x5.7 columns
and a stiffer beam; its column 2-6 has a moment release 1.125 in below joint
6 and is rigid above it, which makes it a pin-ended strut.  (Our reading: a
rigid end offset of half the bay beam's depth, 2.25 in, the depth that with a
0.375 in web gives its identified shear area.)  This model reproduces K to
9e-8 (the data round the W5x16 area at 4.7100004 in^2) and the first five
frequencies to 4e-8.

=====================  =========  =========  ==========  ==========================
member                 A (in^2)   I (in^4)   As (in^2)   provenance
=====================  =========  =========  ==========  ==========================
outer and upper cols.  4.71       21.4       1.2024      W5x16, As = d tw = 5.01 x 0.240
bay columns 2-6, 3-7   1.66       2.50       0.510       S3x5.7, As = 3.00 x 0.170
beams                  (rigid)    0.2758789  0.2500000   identified
bay beam 6-7           (rigid)    1.1074220  0.8437500   identified
=====================  =========  =========  ==========  ==========================

Beam areas do not matter: the diaphragm ties make the beams axially rigid.
Masses are the diagonal of ``M_matrix.csv``: lateral per floor (kg, at the
floor's retained joint) and vertical per joint; rotations are massless.

Parts (``part``):

``reference``  the whole frame (29 DOFs after the ties, as SAP2000's).
``numerical``  the frame without the physical portal's members (columns
               2-6, 3-7 and beam 6-7): the numerical substructure.
``bay``        only the physical portal's members (no mass).
``lower``      the first story without the portal: columns 1-5, 4-8, beams 5-6, 7-8 (floor-1 masses).
``upper``      stories 2 and 3 (floor-2 and floor-3 masses).

``bay_columns = "steel01"`` replaces column 3-7 by a force-based element
with a fiber S3x5.7 section of Steel01 (yield stress ``fy`` Pa, hardening
ratio ``hardening``) aggregated with its elastic shear stiffness G As.
Column 2-6 carries no moment (see above) and stays elastic.
"""

from __future__ import annotations

from collections.abc import Sequence

from dataclasses import dataclass

INCH = 0.0254
E = 29000.0 * 6.894757293168e6  # Pa (29000 ksi, SAP2000's steel)
G = E / (2.0 * 1.3)             # Pa (nu = 0.3)
BAY = 0.762                     # m
STORY = 0.635                   # m
HINGE_OFFSET = 1.125 * INCH     # m, rigid length of column 2-6 above its moment release
RIGID_BEAM_AREA = 1.0 * INCH**2  # m^2, any value: the floor ties keep the beams' length


@dataclass(frozen=True)
class Section:
    """Elastic section: area A (m^2), moment of inertia I (m^4), shear area As (m^2)."""

    area: float
    inertia: float
    shear_area: float

    @classmethod
    def inches(cls, area: float, inertia: float, shear_area: float) -> "Section":
        return cls(area * INCH**2, inertia * INCH**4, shear_area * INCH**2)


W5X16 = Section.inches(4.71, 21.4, 5.01 * 0.240)
S3X57 = Section.inches(1.66, 2.50, 3.00 * 0.170)
BEAM = Section.inches(RIGID_BEAM_AREA / INCH**2, 0.2758789, 0.2500000)
BAY_BEAM = Section.inches(RIGID_BEAM_AREA / INCH**2, 1.1074220, 0.8437500)
S3X57_SHAPE = {"d": 3.00 * INCH, "bf": 2.330 * INCH, "tf": 0.260 * INCH, "tw": 0.170 * INCH}

LATERAL_MASS = {1: 7680.90291732432, 2: 11496.0076367116, 3: 11465.7169564906}  # kg per floor
VERTICAL_MASS = {                                                                 # kg per joint
    5: 1921.04971948877, 6: 1919.40173917339, 7: 1919.40173917339, 8: 1921.04971948877,
    9: 1921.04971948877, 10: 3826.95409886702, 11: 3826.95409886702, 12: 1921.04971948877,
    13: 1913.47704943351, 14: 3819.38142881177, 15: 3819.38142881177, 16: 1913.47704943351,
}
FLOOR_RETAINED = {1: 6, 2: 10, 3: 14}

PORTAL = {("col", 2), ("col", 3), ("beam", 6)}  # (kind, first joint) of the physical portal's members
FLOORS_WITH_MASS = {"reference": (1, 2, 3), "numerical": (1, 2, 3), "bay": (), "lower": (1,), "upper": (2, 3)}


DOF_NUMBER = {"x": 1, "z": 2, "theta": 3}
"""OpenSees DOF of the control names used by the examples (``floor1.x``, ``J6.z``, ``J5.theta``)"""


def control_nodes(names: Sequence[str]) -> list[tuple[int, int]]:
    """(node, dof) of control DOF names ``floorN.x`` (the floor's retained node) and ``J<joint>.z|theta``."""
    nodes = []
    for name in names:
        place, kind = name.split(".")
        floor = int(place[len("floor"):]) if place.startswith("floor") else None
        nodes.append((FLOOR_RETAINED[floor] if floor else int(place[1:]), DOF_NUMBER[kind]))
    return nodes


def in_part(part: str, kind: str, first: int) -> bool:
    """Whether the member (kind, first joint) belongs to ``part`` (see the module docstring)."""
    portal = (kind, first) in PORTAL
    story = (first - 1) // 4 + 1 if kind == "col" else (first - 1) // 4  # columns above, beams at floor
    return {"reference": True, "numerical": not portal, "bay": portal,
            "lower": not portal and story == 1, "upper": story >= 2}[part]


def joint_xy(joint: int) -> tuple[float, float]:
    """Coordinates (m) of SAP2000 joint 1..16."""
    return ((joint - 1) % 4) * BAY, ((joint - 1) // 4) * STORY


def members() -> list[tuple[str, int, int, int]]:
    """(kind, lower/left joint, other joint, element tag) of the 12 columns and 9 beams."""
    columns = [("col", j, j + 4, 100 + j) for j in range(1, 13)]
    beams = [("beam", 4 * f + 1 + c, 4 * f + 2 + c, 200 + 4 * f + 1 + c) for f in (1, 2, 3) for c in range(3)]
    return columns + beams


def part_joints(part: str) -> list[int]:
    """The joints (node tags) that the members of ``part`` connect."""
    return sorted({j for kind, a, b, _ in members() if in_part(part, kind, a) for j in (a, b)})


def build(ops, part: str = "reference", bay_columns: str = "elastic", fy: float = 250e6, hardening: float = 0.02,
          masses: bool = True) -> None:
    """Define the frame (or one of its parts) in the openseespy domain; SI units."""
    if part not in FLOORS_WITH_MASS:
        raise ValueError(f"part must be one of {sorted(FLOORS_WITH_MASS)}, not {part!r}")
    if bay_columns not in ("elastic", "steel01"):
        raise ValueError(f"bay_columns must be 'elastic' or 'steel01', not {bay_columns!r}")
    chosen = [m for m in members() if in_part(part, m[0], m[1])]
    joints = part_joints(part)
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    for j in joints:
        ops.node(j, *joint_xy(j))
        if j in (1, 4):
            ops.fix(j, 1, 1, 1)
        elif j in (2, 3):
            ops.fix(j, 1, 1, 0)
    ops.geomTransf("Linear", 1)
    for kind, a, b, tag in chosen:
        if (kind, a) == ("col", 2):
            _released_strut(ops, tag, a, b)
        elif (kind, a) == ("col", 3) and bay_columns == "steel01":
            _steel01_column(ops, tag, a, b, fy, hardening)
        else:
            section = (S3X57 if a == 3 else W5X16) if kind == "col" else (BAY_BEAM if a == 6 else BEAM)
            ops.element("ElasticTimoshenkoBeam", tag, a, b, E, G, section.area, section.inertia,
                        section.shear_area, 1)
    for floor, retained in FLOOR_RETAINED.items():
        for j in joints:
            if (j - 1) // 4 == floor and j != retained:
                ops.equalDOF(retained, j, 1)
    if masses:
        for floor in FLOORS_WITH_MASS[part]:
            for j in range(4 * floor + 1, 4 * floor + 5):
                lateral = LATERAL_MASS[floor] if j == FLOOR_RETAINED[floor] else 0.0
                ops.mass(j, lateral, VERTICAL_MASS[j], 0.0)


def _released_strut(ops, tag: int, base: int, top: int) -> None:
    """Column 2-6: S3x5.7 over the flexible length l, moment release at l, rigid from there to the joint.

    The rigid part is a joint offset of the element's transformation.  A
    released Timoshenko member has flexibility l/(3EI) + 1/(G As l) at its
    other end; the Euler-Bernoulli element with I_eq = 4I/(4 + Phi_l)
    (Phi_l = 12EI/(G As l^2)) has the same, and A_eq = A l/L keeps the axial
    stiffness EA/L of the whole column (the data's, equal to column 3-7's).
    """
    flexible = STORY - HINGE_OFFSET
    phi = 12.0 * E * S3X57.inertia / (G * S3X57.shear_area * flexible**2)
    ops.geomTransf("Linear", tag, "-jntOffset", 0.0, 0.0, 0.0, -HINGE_OFFSET)
    ops.element("elasticBeamColumn", tag, base, top, S3X57.area * flexible / STORY, E,
                4.0 * S3X57.inertia / (4.0 + phi), tag, "-release", 2)


def _steel01_column(ops, tag: int, base: int, top: int, fy: float, hardening: float) -> None:
    """Column 3-7 as a force-based element: fiber S3x5.7 of Steel01 plus elastic shear G As."""
    shape = S3X57_SHAPE
    steel, shear, fibers, section = tag, tag + 1, tag + 2, tag + 3
    ops.uniaxialMaterial("Steel01", steel, fy, E, hardening)
    ops.uniaxialMaterial("Elastic", shear, G * S3X57.shear_area)
    half, web = shape["d"] / 2.0, shape["d"] / 2.0 - shape["tf"]
    ops.section("Fiber", fibers)
    ops.patch("rect", steel, 4, 1, web, -shape["bf"] / 2, half, shape["bf"] / 2)
    ops.patch("rect", steel, 4, 1, -half, -shape["bf"] / 2, -web, shape["bf"] / 2)
    ops.patch("rect", steel, 12, 1, -web, -shape["tw"] / 2, web, shape["tw"] / 2)
    ops.section("Aggregator", section, shear, "Vy", "-section", fibers)
    ops.beamIntegration("Lobatto", tag, section, 5)
    ops.element("forceBeamColumn", tag, base, top, 1, tag)
