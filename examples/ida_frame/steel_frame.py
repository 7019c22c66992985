"""A three-storey, one-bay steel moment frame whose columns and beams yield: the structure of the IDA campaign.

Geometry: bay 6.0 m, storeys 3.5 m; base joints 1 (left) and 2 (right) fixed; floor f (1..3) has joints
2f+1 (left, the floor's retained joint) and 2f+2 (right), tied in x by ``equalDOF`` (a rigid floor).
Members: force-based beam-columns (OpenSees ``forceBeamColumn``, 5 Gauss-Lobatto points) with fibre
wide-flange sections (``WFSection2d``) of Steel01 (E = 200 GPa, fy = 345 MPa, A992, hardening ratio
``hardening``): W14x90 columns in storey 1, W14x68 in storeys 2-3, W21x50 beams (AISC nominal
dimensions).  ``elastic = True`` makes every member an ``elasticBeamColumn`` of the same E, A, I (the
linear model).  Mass: ``floor_mass`` kg in x at each floor's joint 2f+1 (the only mass, so the coordinator
sees all of it with ``mass_from_model``); no gravity load (no P-Delta), rotations and vertical DOFs massless.
"""

from __future__ import annotations

from typing import Any

BAY, STOREY, E, FY = 6.0, 3.5, 200e9, 345e6
"""m, m, Pa, Pa"""
INCH = 0.0254
SECTIONS = {"W14x90": (14.0, 0.440, 14.5, 0.710), "W14x68": (14.0, 0.415, 10.0, 0.720),
            "W21x50": (20.8, 0.380, 6.53, 0.535)}
"""AISC nominal (d, tw, bf, tf) in inches"""
COLUMNS, BEAM = ("W14x90", "W14x68", "W14x68"), "W21x50"


def properties(name: str) -> tuple[float, float]:
    """(A m^2, I m^4) of the wide-flange ``name`` from its plates (web between the flanges)."""
    d, tw, bf, tf = (v * INCH for v in SECTIONS[name])
    web = d - 2 * tf
    area = 2 * bf * tf + web * tw
    inertia = tw * web ** 3 / 12 + 2 * (bf * tf ** 3 / 12 + bf * tf * ((d - tf) / 2) ** 2)
    return area, inertia


PARTS = {"whole": (0, 3), "lower": (0, 1), "upper": (1, 3)}
"""the storeys a part holds: (its base level, its top level); ``lower`` is storey 1 and the floor-1 beam, ``upper``
storeys 2-3 standing on the floor-1 joints 3 and 4 (free: the coordinator drives them)"""


def build(ops: Any, floor_mass: float = 60.0e3, hardening: float = 0.01, elastic: bool = False,
          part: str = "whole") -> None:
    """The frame, or the storeys of ``part``, in the OpenSees domain (SI units); a floor's mass is in the part that
    holds its beam."""
    base, top = PARTS[part]
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    for level in range(base, top + 1):
        ops.node(2 * level + 1, 0.0, level * STOREY)
        ops.node(2 * level + 2, BAY, level * STOREY)
    if base == 0:
        ops.fix(1, 1, 1, 1)
        ops.fix(2, 1, 1, 1)
    for floor in range(max(base, 1), top + 1):
        ops.equalDOF(2 * floor + 1, 2 * floor + 2, 1)
        if floor > base:
            ops.mass(2 * floor + 1, floor_mass, 0.0, 0.0)
    ops.geomTransf("Linear", 1)
    ops.uniaxialMaterial("Steel01", 1, FY, E, hardening)
    names = dict.fromkeys(COLUMNS + (BEAM,))
    for tag, name in enumerate(names, start=1):
        d, tw, bf, tf = (v * INCH for v in SECTIONS[name])
        ops.section("WFSection2d", tag, 1, d, tw, bf, tf, 8, 2)
        ops.beamIntegration("Lobatto", tag, tag, 5)
    section = {name: tag for tag, name in enumerate(names, start=1)}
    members = [(2 * s + 1 + k, 2 * s + 3 + k, COLUMNS[s]) for s in range(base, top) for k in (0, 1)]
    members += [(2 * f + 1, 2 * f + 2, BEAM) for f in range(base + 1, top + 1)]
    for tag, (i, j, name) in enumerate(members, start=1):
        if elastic:
            ops.element("elasticBeamColumn", tag, i, j, *properties(name)[:1], E, properties(name)[1], 1)
        else:
            ops.element("forceBeamColumn", tag, i, j, 1, section[name])
