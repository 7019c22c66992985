"""An openseespy model of a steel cantilever column (the specimen of two_actuators_2d.toml): base fixed (node 1),
the top (node 2) driven in x and rotation by the virtual lab's actuators through the setup; with ``arm`` > 0 a
loading arm up to node 3, ``arm`` m above the top, where an actuator can be attached (corotational, ``arm_EI``
and ``arm_EA`` stiff: the rig's rigid arm as stiff as the model makes it)."""


def build(ops, length=1.5, E=200e9, A=5.0e-3, I=2.0e-5, arm=0.0, arm_EA=1e13, arm_EI=1e13):
    """Height ``length`` (m), E (Pa), A (m^2), I (m^4); one elastic element, linear transformation; ``arm`` (m)."""
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    ops.geomTransf("Linear", 1)
    ops.node(1, 0.0, 0.0)
    ops.node(2, 0.0, length)
    ops.fix(1, 1, 1, 1)
    ops.element("elasticBeamColumn", 1, 1, 2, A, E, I, 1)
    if arm > 0:
        ops.geomTransf("Corotational", 2)
        ops.node(3, 0.0, length + arm)
        ops.element("elasticBeamColumn", 2, 2, 3, arm_EA, 1.0, arm_EI, 2)
