"""The virtual specimen's declaration: ``kind`` chooses a module kind, whose keys it takes, plus the specimen's
own (``coordinates``, ``setup``); each kind's schema is imported when that kind is validated or documented.

A newcomer's specimen kind is one module kind (hybridsim.modules.registry) and one line in ``KINDS`` here,
pointing at a class whose ``CONFIG`` is :func:`specimen_schema` of the module's declaration.
"""

from __future__ import annotations

from collections.abc import Mapping

from hybridsim.modules import linear, spring
from hybridsim.modules.config_schema import Key, Numbers, Schema, Table, Text, Variants
from hybridsim.modules.experimental.setups import kinds as setup_kinds

COORDINATES = ("dofs", "actuators", "attachments")
"""where the lab drives the specimen: the setup's DOFs (pose of the strokes), the strokes themselves, or (an
openseespy model) its actuator elements at their attachment points"""

OWN = {
    "coordinates": Key(Text(COORDINATES), "where it is driven: the setup's DOFs, the strokes, or (opensees) "
                       "actuator elements at their attachment points", default="dofs"),
    "setup": Key(Table(setup_kinds.CONFIG), "the rig (coordinates = 'dofs'; absent in a site's plant: the site's)"),
    "held_loads": Key(Numbers("N", (1,)), "coordinates = 'dofs': what the jacks hold on the rig's passive load "
                      "cells (a spreader beam's rods, tension); the actuators balance the specimen and them"),
}


def specimen_schema(module: Schema, keys: Mapping[str, Key] | None = None, optional: tuple[str, ...] = ()) -> Schema:
    """``module``'s declaration as a specimen: its ``dofs`` (and ``optional``) filled in by the lab, not required;
    with the specimen's own keys and ``keys``."""
    relaxed = {name: (Key(key.type, key.doc + " (default: the DOFs it is driven at)" if name == "dofs" else key.doc,
                          False, key.default) if name in ("dofs", *optional) else key)
               for name, key in module.keys.items()}
    return Schema(f"specimen '{module.title}'", module.doc, {**relaxed, **OWN, **(keys or {})}, module.variants,
                  module.exactly_one, module.at_most_one, module.renamed)


class Linear:
    CONFIG = specimen_schema(linear.CONFIG)


class Spring:
    CONFIG = specimen_schema(spring.CONFIG)


KINDS = {
    "linear": "hybridsim.modules.plant.specimen_kinds:Linear",
    "spring": "hybridsim.modules.plant.specimen_kinds:Spring",
    "opensees": "hybridsim.modules.plant.simulated_domain:SimulatedDomain",
}
CONFIG = Schema("specimen", "The virtual specimen: a module kind and its keys, driven at the setup's DOFs, at the "
                "strokes, or (opensees) through actuator elements at their attachment points (docs/setups.md).",
                variants=Variants("kind", KINDS, doc="the module kind that makes the load-cell forces"))
