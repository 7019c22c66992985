"""Test model: cantilever steel columns (fixed bases) whose tops are tied laterally by equalDOF."""


def build(ops, columns=1, length=0.635, spacing=0.762, E=200e9, A=1.0774e-3, I=1.0489e-6, top_mass=0.0,
          link=0.0):
    """``columns`` vertical elastic columns of height ``length`` (m), E (Pa), A (m^2), I (m^4).

    Nodes: base 10*k+1, top 10*k+2 for column k = 0, 1, ...; tops of columns 1.. are tied
    to the top of column 0 in x by equalDOF.  ``top_mass`` (kg) is put at each top in x.
    ``link`` > 0 adds node 3, ``link`` m above node 2, tied to it by a rigid link.
    """
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    ops.geomTransf("Linear", 1)
    for k in range(columns):
        base, top = 10 * k + 1, 10 * k + 2
        ops.node(base, k * spacing, 0.0)
        ops.node(top, k * spacing, length)
        ops.fix(base, 1, 1, 1)
        ops.element("elasticBeamColumn", k + 1, base, top, A, E, I, 1)
        if top_mass:
            ops.mass(top, top_mass, 0.0, 0.0)
        if k:
            ops.equalDOF(2, top, 1)
    if link:
        ops.node(3, 0.0, length + link)
        ops.rigidLink("beam", 2, 3)
