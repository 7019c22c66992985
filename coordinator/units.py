"""Units and DOF names of a results file: the ``units`` and ``dofs`` attributes of every dataset and module group.

A DOF is a translation (m, N) or a rotation (rad, N*m), as its module describes it; the units of a
response quantity over DOFs are one string per column.  Everything is SI, as inside the coordinator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hybridsim.wire.contract import Description

DISPLACEMENT = {"translation": "m", "rotation": "rad"}
FORCE = {"translation": "N", "rotation": "N*m"}
RESPONSE: dict[str, Mapping[str, str]] = {
    "displacement": DISPLACEMENT,
    "velocity": {"translation": "m/s", "rotation": "rad/s"},
    "acceleration": {"translation": "m/s^2", "rotation": "rad/s^2"},
    "restoring_force": FORCE,
}
MODEL = {"mass": {"translation": "kg", "rotation": "kg*m^2"},
         "damping": {"translation": "N*s/m", "rotation": "N*m*s/rad"},
         "initial_stiffness": {"translation": "N/m", "rotation": "N*m/rad"}}
SCALARS = {"time": "s", "step_id": "1", "ground_acceleration": "m/s^2", "wall_step_s": "s"}


class KindConflict(ValueError):
    """Two modules describe one DOF differently (a translation in one, a rotation in the other)."""


def dof_kinds(dofs: Sequence[str], descriptions: Mapping[str, Description]) -> list[str]:
    """The kind of every structure DOF, as the modules that have it describe it; they must agree."""
    kinds: dict[str, tuple[str, str]] = {}
    for module, description in descriptions.items():
        for dof in description.dofs:
            first, kind = kinds.setdefault(dof.name, (module, dof.kind))
            if kind != dof.kind:
                raise KindConflict(
                    f"DOF {dof.name!r} is a {kind} in module {first!r} but a {dof.kind} in module {module!r}: "
                    f"a DOF has one kind (m or rad); for a protocol module set its 'kinds' config key")
    return [kinds[d][1] if d in kinds else "translation" for d in dofs]


def labels(dofs: Sequence[str], kinds: Sequence[str], modules: Mapping[str, tuple[Description, str]]
           ) -> dict[str, dict[str, Any]]:
    """Attributes by dataset or group path: ``units`` and ``dofs`` of each; ``kind`` and ``where`` of each module."""
    out: dict[str, dict[str, Any]] = {key: {"units": unit} for key, unit in SCALARS.items()}
    for key, units in {**RESPONSE, **{f"model/{k}": v for k, v in MODEL.items()}}.items():
        out[key] = {"units": [units[k] for k in kinds], "dofs": list(dofs)}
    for name, (description, where) in modules.items():
        names = list(description.dof_names)
        module_kinds = [d.kind for d in description.dofs]
        out[f"modules/{name}"] = {"kind": description.kind, "where": where, "dofs": names,
                                  "units": [DISPLACEMENT[k] for k in module_kinds],
                                  "force_units": [FORCE[k] for k in module_kinds]}
        out[f"modules/{name}/displacement"] = {"units": [DISPLACEMENT[k] for k in module_kinds], "dofs": names}
        out[f"modules/{name}/force"] = {"units": [FORCE[k] for k in module_kinds], "dofs": names}
    return out


def ordered_dofs(dofs: Sequence[str], shaken: Sequence[bool], owners: Mapping[str, int]) -> list[str]:
    """The DOFs for a peak table: those the ground shakes (floors) first, then interfaces (in more than
    one module), then the rest, each group in the structure's order."""
    floors = [d for d, s in zip(dofs, shaken) if s]
    interfaces = [d for d in dofs if owners.get(d, 0) > 1 and d not in floors]
    return floors + interfaces + [d for d in dofs if d not in floors and d not in interfaces]
