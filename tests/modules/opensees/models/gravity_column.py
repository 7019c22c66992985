"""Test model: an elastic cantilever column with P-Delta (or corotational) geometry, with or without its gravity load."""


def build(ops, length=3.0, E=200e9, A=0.01, I=1.0e-4, transformation="PDelta", top_mass=0.0, gravity=0.0,
          added=None):
    """Base node 1 fixed at (0, 0), top node 2 at (0, ``length``) (m), one elasticBeamColumn (E Pa, A m^2, I m^4).

    ``gravity`` > 0 (N): the monolithic reference's gravity stage, a downward load at the top ramped in 10
    static increments, then ``loadConst -time 0.0`` (held through the transient that follows). ``top_mass``
    (kg) at the top in x. ``added`` = [times, forces] (s, N): a further downward load at the top over the
    transient's time (a Path series, after the gravity stage).
    """
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    ops.geomTransf(transformation, 1)
    ops.node(1, 0.0, 0.0)
    ops.node(2, 0.0, length)
    ops.fix(1, 1, 1, 1)
    ops.element("elasticBeamColumn", 1, 1, 2, A, E, I, 1)
    if top_mass:
        ops.mass(2, top_mass, 0.0, 0.0)
    if gravity:
        ops.timeSeries("Linear", 1)
        ops.pattern("Plain", 1, 1)
        ops.load(2, 0.0, -gravity, 0.0)
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
    if added:
        ops.timeSeries("Path", 2, "-time", *added[0], "-values", *added[1])
        ops.pattern("Plain", 2, 2)
        ops.load(2, 0.0, -1.0, 0.0)
