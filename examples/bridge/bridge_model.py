"""The three-pier bridge of `hybridsim study bridge` (docs/bridge.md) as openseespy models, whole or in parts.

A 2-D continuous steel deck of two spans over three cantilever piers, the deck's mass lumped at the pier tops,
shaken along the deck (x).  Nodes: pier bases 1, 2, 3 (fixed) at x = 0, L, 2L; pier tops 11, 12, 13 at height
H.  ``part`` chooses what is built:

- ``"whole"``: the bridge with its masses (the monolithic reference);
- ``"left"`` / ``"right"``: one pier alone (base 1 or 3, top 11 or 13), no mass: the lab's specimen and the
  model behind the OpenSees ``adapter`` element;
- ``"middle"``: the middle pier and the whole deck (tops 11, 12, 13), no mass.

``law``: ``"elastic"`` (elasticBeamColumn of E, A, I) or ``"steel01"`` (a force-based column of a fibre
section, a solid steel plate of depth h and width b with A = b h, I = b h^3/12, Steel01 of yield stress fy
and hardening ratio ``hardening``; 5 integration points).  The law applies to the LEFT pier only (the tested
one); the others stay elastic.  Values and their sources: docs/bridge.md.
"""

PIER_HEIGHT = 1.5      # m
SPAN = 6.0             # m
E = 200e9              # Pa (steel)
PIER_A, PIER_I = 5.0e-3, 2.0e-5        # m^2, m^4 (a 219 x 22.8 mm plate in strong-axis bending)
DECK_A, DECK_I = 1.0e-2, 1.0e-4        # m^2, m^4
TOP_MASS = 10000.0     # kg per pier top, horizontal (the deck along x; no vertical shaking, no gravity)
BASES, TOPS = (1, 2, 3), (11, 12, 13)


def _pier(ops, index, height, law, fy, hardening):
    base, top = BASES[index], TOPS[index]
    if law == "steel01" and index == 0:
        depth = (12.0 * PIER_I / PIER_A) ** 0.5
        width = PIER_A / depth
        ops.uniaxialMaterial("Steel01", 1, fy, E, hardening)
        ops.section("Fiber", 1)
        ops.patch("rect", 1, 40, 1, -depth / 2, -width / 2, depth / 2, width / 2)
        ops.beamIntegration("Lobatto", 1, 1, 5)
        ops.element("forceBeamColumn", 100 + index, base, top, 1, 1)
    else:
        ops.element("elasticBeamColumn", 100 + index, base, top, PIER_A, E, PIER_I, 1)


def build(ops, part="whole", law="elastic", fy=250e6, hardening=0.02, height=PIER_HEIGHT, span=SPAN,
          mass=TOP_MASS):
    """Build ``part`` of the bridge (m, Pa, kg); ``law`` of the left pier."""
    if part not in ("whole", "left", "middle", "right"):
        raise ValueError(f"part must be whole, left, middle or right, not {part!r}")
    if law not in ("elastic", "steel01"):
        raise ValueError(f"law must be elastic or steel01, not {law!r}")
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    ops.geomTransf("Linear", 1)
    piers = {"whole": (0, 1, 2), "left": (0,), "middle": (1,), "right": (2,)}[part]
    tops = (0, 1, 2) if part in ("whole", "middle") else piers
    for i in tops:
        ops.node(TOPS[i], i * span, height)
    for i in piers:
        ops.node(BASES[i], i * span, 0.0)
        ops.fix(BASES[i], 1, 1, 1)
        _pier(ops, i, height, law, fy, hardening)
    if part in ("whole", "middle"):
        for i in (0, 1):
            ops.element("elasticBeamColumn", 200 + i, TOPS[i], TOPS[i + 1], DECK_A, E, DECK_I, 1)
    if part == "whole":
        for top in TOPS:
            ops.mass(top, mass, 0.0, 0.0)
