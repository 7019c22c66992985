"""A statically indeterminate test model: ground -A- node 2 -B- node 3 -C- ground, x only (1-D)."""


def build(ops, k_a=4.0e5, fy_a=1600.0, b=0.05, k_b=3.0e5, k_c=3.0e5):
    """A: Steel01 (k_a N/m, fy_a N, b); B and C: elastic (k_b, k_c N/m). Node 2 is the interface, node 3 internal:
    two paths from node 2 to the ground, so once A has yielded a self-equilibrated force stays locked in."""
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    for node in (1, 2, 3):
        ops.node(node, 0.0)
    ops.fix(1, 1)
    ops.uniaxialMaterial("Steel01", 1, fy_a, k_a, b)
    ops.uniaxialMaterial("Elastic", 2, k_b)
    ops.uniaxialMaterial("Elastic", 3, k_c)
    ops.element("zeroLength", 1, 1, 2, "-mat", 1, "-dir", 1)
    ops.element("zeroLength", 2, 2, 3, "-mat", 2, "-dir", 1)
    ops.element("zeroLength", 3, 1, 3, "-mat", 3, "-dir", 1)
