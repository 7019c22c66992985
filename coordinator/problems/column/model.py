"""The column of `hybridsim study column` as an OpenSees model file: a 3-D cantilever with P-Delta, elastic or with
a Steel01 fibre section (a square tube), its top's mass and gravity stage for the one-model reference only."""

WIDTH, WALL = 0.25, 0.01
"""m: the square tube of the fibre section (A = 9.6e-3 m^2, I = 9.2e-5 m^4)"""


def build(ops, length=3.0, E=200e9, G=77e9, A=0.0096, I=9.2e-5, J=1.5e-4, section="elastic", fy=350e6,
          hardening=0.01, top_mass=0.0, gravity=0.0):
    """Base node 1 fixed at the origin, top node 2 at (0, 0, ``length``) m, z up; one element (elastic:
    elasticBeamColumn with E, G (Pa), A (m^2), I about both axes, J (m^4); fibre: a forceBeamColumn of five
    Lobatto points over a Steel01 tube section (fy Pa, E, ``hardening``) with G J in torsion).  ``top_mass``
    (kg) at the top in x and y; ``gravity`` (N) > 0: the reference's gravity stage, a downward load at the top
    in ten LoadControl increments (Newton, NormDispIncr 1e-12), then ``loadConst -time 0.0``."""
    ops.model("basic", "-ndm", 3, "-ndf", 6)
    ops.node(1, 0.0, 0.0, 0.0)
    ops.node(2, 0.0, 0.0, length)
    ops.fix(1, 1, 1, 1, 1, 1, 1)
    ops.geomTransf("PDelta", 1, 1.0, 0.0, 0.0)
    if section == "elastic":
        ops.element("elasticBeamColumn", 1, 1, 2, A, E, G, J, I, I, 1)
    else:
        _tube(ops, E, G * J, fy, hardening)
        ops.beamIntegration("Lobatto", 1, 1, 5)
        ops.element("forceBeamColumn", 1, 1, 2, 1, 1)
    if top_mass:
        ops.mass(2, top_mass, top_mass, 0.0, 0.0, 0.0, 0.0)
    if gravity:
        _gravity(ops, gravity)


def _tube(ops, E, GJ, fy, hardening):
    """Section 1: a square steel tube of WIDTH and WALL in Steel01 fibres (four walls, 8 fibres along each)."""
    ops.uniaxialMaterial("Steel01", 1, fy, E, hardening)
    ops.section("Fiber", 1, "-GJ", GJ)
    h, t = WIDTH / 2, WALL
    for y0, z0, y1, z1, ny, nz in ((-h, -h, h, -h + t, 8, 1), (-h, h - t, h, h, 8, 1),
                                   (-h, -h + t, -h + t, h - t, 1, 8), (h - t, -h + t, h, h - t, 1, 8)):
        ops.patch("rect", 1, ny, nz, y0, z0, y1, z1)


def _gravity(ops, load):
    ops.timeSeries("Linear", 100)
    ops.pattern("Plain", 100, 100)
    ops.load(2, 0.0, 0.0, -load, 0.0, 0.0, 0.0)
    ops.constraints("Plain")
    ops.numberer("RCM")
    ops.system("BandGeneral")
    ops.test("NormDispIncr", 1e-12, 25)
    ops.algorithm("Newton")
    ops.integrator("LoadControl", 0.1)
    ops.analysis("Static")
    if ops.analyze(10) != 0:
        raise RuntimeError("the gravity stage did not converge")
    ops.loadConst("-time", 0.0)
    ops.wipeAnalysis()
