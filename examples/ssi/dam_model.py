"""An earth-dam-like embankment with the structure of ssi_model.py on its crest (`hybridsim study ssi --case
dam-mass-module`, docs/ssi.md), as openseespy models.

The embankment: plane strain, 6 m high, 24 m at its base and 12 m at its crest (slopes 1:1), 1 m x 1 m ``quad``
elements with ``tri31`` elements along the slopes, base fixed, ElasticIsotropic E = 60 MPa, nu = 0.3, density
1800 kg/m^3 (ssi_model.py's soil; unit thickness, 138 t); the footing and column of ssi_model.py stand on the
crest's nodes at x = 5, 6, 7 m.  ``part``: ``"whole"`` (the monolithic reference, the footing tied to the crest by
equalDOF in x and y), ``"soil"`` (ndf 2, the embankment alone), ``"frame"`` (ssi_model.py's).  Values are my
choice.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ssi_model  # noqa: E402

HEIGHT = ssi_model.DEPTH                 # m
BASE_LEFT, BASE_RIGHT = -6, 18           # m, the base's ends; the slopes rise 1 m per 1 m
FOOTING = ssi_model.FOOTING
DEPTH = HEIGHT
SOIL_DENSITY = ssi_model.SOIL_DENSITY


def soil_node(i, j):
    """The embankment's node at x = i m, y = j m (j = HEIGHT: the crest)."""
    return 1000 + j * 100 + (i - BASE_LEFT)


def _row(j):
    """The x of the nodes of row j."""
    return range(BASE_LEFT + j, BASE_RIGHT - j + 1)


def _embankment(ops, density):
    ops.model("basic", "-ndm", 2, "-ndf", 2)
    ops.nDMaterial("ElasticIsotropic", ssi_model.SOIL_MATERIAL, ssi_model.SOIL_E, ssi_model.SOIL_NU, density)
    for j in range(HEIGHT + 1):
        for i in _row(j):
            ops.node(soil_node(i, j), float(i), float(j))
            if j == 0:
                ops.fix(soil_node(i, j), 1, 1)
    tag = 1
    for j in range(HEIGHT):
        left, right = BASE_LEFT + j, BASE_RIGHT - j
        ops.element("tri31", tag, soil_node(left, j), soil_node(left + 1, j), soil_node(left + 1, j + 1), 1.0,
                    "PlaneStrain", ssi_model.SOIL_MATERIAL, 0.0, density)
        ops.element("tri31", tag + 1, soil_node(right - 1, j), soil_node(right, j), soil_node(right - 1, j + 1), 1.0,
                    "PlaneStrain", ssi_model.SOIL_MATERIAL, 0.0, density)
        tag += 2
        for i in range(left + 1, right - 1):
            ops.element("quad", tag, soil_node(i, j), soil_node(i + 1, j), soil_node(i + 1, j + 1),
                        soil_node(i, j + 1), 1.0, "PlaneStrain", ssi_model.SOIL_MATERIAL, 0.0, density)
            tag += 1


def build(ops, part="whole", mass=ssi_model.TOP_MASS, law="elastic", density=0.0, footing_mass=0.0):
    if part not in ("whole", "soil", "frame"):
        raise ValueError(f"part must be whole, soil or frame, not {part!r}")
    if law != "elastic":
        raise ValueError("the embankment is elastic")
    if part in ("whole", "soil"):
        _embankment(ops, density)
    if part in ("whole", "frame"):
        ssi_model.build(ops, part="frame", mass=mass)
    if part == "whole":
        for k, x in enumerate(FOOTING):
            ops.equalDOF(k + 1, soil_node(x, HEIGHT), 1, 2)
            if footing_mass:
                ops.mass(k + 1, footing_mass, footing_mass, 0.0)
        ops.mass(4, mass, 0.0, 0.0)
