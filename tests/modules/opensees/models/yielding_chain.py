"""The upper part of `hybridsim study dynamic`'s chain, x2 -k3- x3 -k4- x4, with k3 elastic-perfectly plastic."""

from hybridsim.coordinator.problems.dynamic.chain import K3, K4, M2_UPPER, M3, M4


def build(ops, yield_deformation=2e-3):
    """Nodes 2 (the interface, 500 kg of x2's mass), 3 and 4 (their masses); x only; k3 yields at
    ``yield_deformation`` (m), k4 is elastic."""
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    for node, mass in ((2, M2_UPPER), (3, M3), (4, M4)):
        ops.node(node, 0.0)
        ops.mass(node, mass)
    ops.uniaxialMaterial("ElasticPP", 3, K3, yield_deformation)
    ops.uniaxialMaterial("Elastic", 4, K4)
    ops.element("zeroLength", 3, 2, 3, "-mat", 3, "-dir", 1)
    ops.element("zeroLength", 4, 3, 4, "-mat", 4, "-dir", 1)
