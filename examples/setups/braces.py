"""An openseespy model of an inverted-V brace under its loading beam (the specimen of inverted_v_brace.toml): two
pinned braces (corotational trusses) from their feet (nodes 11, 12, fixed: the braces' load cells) up to the apex
(node 1), and the loading beam through the apex to its ends (nodes 2, 3) where the actuators are attached
(corotational elastic elements, ``beam_EA`` and ``beam_EI`` stiff)."""


def build(ops, half_span=0.8, feet=((-1.5, -2.0), (1.5, -2.0)), E=200e9, A=1.0e-4, beam_EA=1e16, beam_EI=1e16):
    """Apex at the origin; ``feet`` of the braces (m), their E (Pa) and A (m^2); the beam's ends ``half_span`` (m)
    either side of the apex."""
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    ops.node(1, 0.0, 0.0)
    ops.node(2, -half_span, 0.0)
    ops.node(3, half_span, 0.0)
    ops.uniaxialMaterial("Elastic", 1, E)
    for tag, (x, y) in zip((11, 12), feet):
        ops.node(tag, x, y)
        ops.fix(tag, 1, 1, 1)
        ops.element("corotTruss", tag, tag, 1, A, 1)
    ops.geomTransf("Corotational", 1)
    ops.element("elasticBeamColumn", 1, 2, 1, beam_EA, 1.0, beam_EI, 1)
    ops.element("elasticBeamColumn", 2, 1, 3, beam_EA, 1.0, beam_EI, 1)
