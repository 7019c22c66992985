"""The soil-foundation-structure system of `hybridsim study ssi` (docs/ssi.md) as openseespy models.

A plane-strain elastic soil block (quad elements, 1 m x 1 m, base fixed, sides free) carries a concrete
footing beam on three surface nodes; a steel column stands on the footing's middle node with the structure's
mass at its top.  ``part``: ``"whole"`` (soil, footing, column and the mass: the monolithic reference; the
footing nodes tied to the soil's surface nodes by equalDOF in x and y), ``"soil"`` (ndf 2, the soil alone,
massless), ``"frame"`` (ndf 3, footing and column, massless).  The soil is massless in every part (the
framework's modules are quasi-static): its inertia is neither in the hybrid nor in the reference.
Values are my choice (docs/ssi.md).
"""

WIDTH, DEPTH = 12, 6                   # elements of 1 m
SOIL_E, SOIL_NU = 60e6, 0.3            # Pa: a stiff clay / dense sand
FOOTING = (5, 6, 7)                    # the surface nodes' x (m) under the footing nodes 1, 2, 3
COLUMN_HEIGHT = 3.0                    # m
STEEL_E, COLUMN_A, COLUMN_I = 200e9, 1.0e-2, 1.0e-4
CONCRETE_E, FOOTING_A, FOOTING_I = 30e9, 1.0, 1.0 / 12.0   # a 1 m x 1 m footing beam
TOP_MASS = 20000.0                     # kg, horizontal


def soil_node(i, j):
    """The soil node at x = i m, y = j m (j = DEPTH: the surface)."""
    return 1000 + j * (WIDTH + 1) + i


def build(ops, part="whole", mass=TOP_MASS):
    if part not in ("whole", "soil", "frame"):
        raise ValueError(f"part must be whole, soil or frame, not {part!r}")
    if part in ("whole", "soil"):
        ops.model("basic", "-ndm", 2, "-ndf", 2)
        ops.nDMaterial("ElasticIsotropic", 1, SOIL_E, SOIL_NU)
        for j in range(DEPTH + 1):
            for i in range(WIDTH + 1):
                ops.node(soil_node(i, j), float(i), float(j))
                if j == 0:
                    ops.fix(soil_node(i, j), 1, 1)
        for j in range(DEPTH):
            for i in range(WIDTH):
                ops.element("quad", 1 + j * WIDTH + i, soil_node(i, j), soil_node(i + 1, j), soil_node(i + 1, j + 1),
                            soil_node(i, j + 1), 1.0, "PlaneStrain", 1)
    if part in ("whole", "frame"):
        ops.model("basic", "-ndm", 2, "-ndf", 3)
        ops.geomTransf("Linear", 1)
        for k, x in enumerate(FOOTING):
            ops.node(k + 1, float(x), float(DEPTH))
        ops.node(4, float(FOOTING[1]), DEPTH + COLUMN_HEIGHT)
        ops.element("elasticBeamColumn", 501, 1, 2, FOOTING_A, CONCRETE_E, FOOTING_I, 1)
        ops.element("elasticBeamColumn", 502, 2, 3, FOOTING_A, CONCRETE_E, FOOTING_I, 1)
        ops.element("elasticBeamColumn", 503, 2, 4, COLUMN_A, STEEL_E, COLUMN_I, 1)
    if part == "whole":
        for k, x in enumerate(FOOTING):
            ops.equalDOF(k + 1, soil_node(x, DEPTH), 1, 2)
        ops.mass(4, mass, 0.0, 0.0)
