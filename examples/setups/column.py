"""An openseespy model of a steel cantilever column (the specimen of two_actuators_2d.toml): base fixed, the
top (node 2) driven in x and rotation by the virtual lab's actuators through the setup."""


def build(ops, length=1.5, E=200e9, A=5.0e-3, I=2.0e-5):
    """Height ``length`` (m), E (Pa), A (m^2), I (m^4); one elastic element, linear transformation."""
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    ops.geomTransf("Linear", 1)
    ops.node(1, 0.0, 0.0)
    ops.node(2, 0.0, length)
    ops.fix(1, 1, 1, 1)
    ops.element("elasticBeamColumn", 1, 1, 2, A, E, I, 1)
