"""Test models made of uniaxial springs (zeroLength elements in a 1-D model)."""


def build(ops, case="steel01", fy=100.0, e0=1000.0, b=0.1, fy_b=10.0, e0_b=100.0):
    """``case`` = "steel01": node 1 fixed, node 2 free, one Steel01 spring (fy N, e0 N/m, b).

    ``case`` = "fracture": node 1 fixed - spring A - node 2 - spring B - node 3, with a
    constant 60 N load at node 2.  A is elastic 1000 N/m and fractures (MinMax) at 0.1 m;
    B is elastic-perfectly plastic, 500 N/m, yielding at 50 N.  Once A fractures, B alone
    cannot carry the 60 N: no equilibrium exists.

    ``case`` = "series": node 1 fixed - Steel01 A (fy, e0, b) - node 2 - Steel01 B (fy_b, e0_b, b) - node 3.
    """
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(1, 0.0)
    ops.node(2, 0.0)
    ops.fix(1, 1)
    if case == "steel01":
        ops.uniaxialMaterial("Steel01", 1, fy, e0, b)
        ops.element("zeroLength", 1, 1, 2, "-mat", 1, "-dir", 1)
    elif case == "series":
        ops.node(3, 0.0)
        ops.uniaxialMaterial("Steel01", 1, fy, e0, b)
        ops.uniaxialMaterial("Steel01", 2, fy_b, e0_b, b)
        ops.element("zeroLength", 1, 1, 2, "-mat", 1, "-dir", 1)
        ops.element("zeroLength", 2, 2, 3, "-mat", 2, "-dir", 1)
    elif case == "fracture":
        ops.node(3, 0.0)
        ops.uniaxialMaterial("Elastic", 10, 1000.0)
        ops.uniaxialMaterial("MinMax", 1, 10, "-min", -0.1, "-max", 0.1)
        ops.uniaxialMaterial("Steel01", 2, 50.0, 500.0, 0.0)
        ops.element("zeroLength", 1, 1, 2, "-mat", 1, "-dir", 1)
        ops.element("zeroLength", 2, 2, 3, "-mat", 2, "-dir", 1)
        ops.timeSeries("Constant", 1)
        ops.pattern("Plain", 1, 1)
        ops.load(2, 60.0)
    else:
        raise ValueError(f"unknown case {case!r}")
