"""The soil-foundation-structure system of `hybridsim study ssi` (docs/ssi.md) as openseespy models.

A plane-strain soil block (quad elements, 1 m x 1 m, base fixed, sides free) carries a concrete footing beam
on three surface nodes; a steel column stands on the footing's middle node with the structure's mass at its
top.  ``part``: ``"whole"`` (soil, footing, column and the mass: the monolithic reference; the footing nodes
tied to the soil's surface nodes by equalDOF in x and y), ``"soil"`` (ndf 2, the soil alone), ``"frame"``
(ndf 3, footing and column, massless).  ``law``: ``"elastic"`` (ElasticIsotropic) or ``"pimy"`` (OpenSees'
PressureIndependMultiYield: built in its elastic stage 0, then switched to the plastic stage 1 by
updateMaterialStage before any load, as OpenSees users do after their gravity step; this soil is
weightless, so there is no gravity step).  ``density``: the soil's mass density (kg/m^3; 0: massless, the
hybrid's soil: the framework's modules are quasi-static).  ``footing_mass``: kg at each footing node, x and y
(the footing's concrete; 0: massless).  Values are my choice (docs/ssi.md).
"""

WIDTH, DEPTH = 12, 6                   # elements of 1 m
SOIL_E, SOIL_NU = 60e6, 0.3            # Pa: a stiff clay / dense sand
SOIL_G = SOIL_E / (2 * (1 + SOIL_NU))  # Pa, shear modulus (PressureIndependMultiYield)
SOIL_B = SOIL_E / (3 * (1 - 2 * SOIL_NU))  # Pa, bulk modulus
COHESION = 80e3                        # Pa, PressureIndependMultiYield's apparent cohesion (an undrained clay)
PEAK_SHEAR_STRAIN = 0.1                # octahedral shear strain at the peak strength
YIELD_SURFACES = 20
SOIL_DENSITY = 1800.0                  # kg/m^3, the soil's density where it has mass (docs/ssi.md)
FOOTING = (5, 6, 7)                    # the surface nodes' x (m) under the footing nodes 1, 2, 3
COLUMN_HEIGHT = 3.0                    # m
STEEL_E, COLUMN_A, COLUMN_I = 200e9, 1.0e-2, 1.0e-4
CONCRETE_E, FOOTING_A, FOOTING_I = 30e9, 1.0, 1.0 / 12.0   # a 1 m x 1 m footing beam
TOP_MASS = 20000.0                     # kg, horizontal
FOOTING_MASS = 1600.0                  # kg per footing node, x and y: the 4.8 t concrete beam in thirds
SOIL_MATERIAL = 1


def soil_node(i, j):
    """The soil node at x = i m, y = j m (j = DEPTH: the surface)."""
    return 1000 + j * (WIDTH + 1) + i


def soil_material(ops, law, density):
    if law == "elastic":
        ops.nDMaterial("ElasticIsotropic", SOIL_MATERIAL, SOIL_E, SOIL_NU, density)
    elif law == "pimy":
        # friction angle 0, pressure dependence 0 (their defaults) are left out: openseespy 3.7.1.2 reads the
        # number of yield surfaces right after the peak shear strain (OpenSeesPy issues 157, 164)
        ops.nDMaterial("PressureIndependMultiYield", SOIL_MATERIAL, 2, density, SOIL_G, SOIL_B, COHESION,
                       PEAK_SHEAR_STRAIN, YIELD_SURFACES)
    else:
        raise ValueError(f"law must be elastic or pimy, not {law!r}")


def build(ops, part="whole", mass=TOP_MASS, law="elastic", density=0.0, footing_mass=0.0):
    if part not in ("whole", "soil", "frame"):
        raise ValueError(f"part must be whole, soil or frame, not {part!r}")
    if part in ("whole", "soil"):
        ops.model("basic", "-ndm", 2, "-ndf", 2)
        soil_material(ops, law, density)
        for j in range(DEPTH + 1):
            for i in range(WIDTH + 1):
                ops.node(soil_node(i, j), float(i), float(j))
                if j == 0:
                    ops.fix(soil_node(i, j), 1, 1)
        for j in range(DEPTH):
            for i in range(WIDTH):
                ops.element("quad", 1 + j * WIDTH + i, soil_node(i, j), soil_node(i + 1, j), soil_node(i + 1, j + 1),
                            soil_node(i, j + 1), 1.0, "PlaneStrain", SOIL_MATERIAL, 0.0, density)
        if law == "pimy":
            ops.updateMaterialStage("-material", SOIL_MATERIAL, "-stage", 1)
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
            if footing_mass:
                ops.mass(k + 1, footing_mass, footing_mass, 0.0)
        ops.mass(4, mass, 0.0, 0.0)
