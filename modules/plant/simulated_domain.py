"""OpenFresco's simulated-domain control: an openseespy model of the specimen with the rig's actuators in it.

Each actuator is a corotational truss in the model from its fixed end (``base``, a node the lab adds and
fixes) to its attachment ``node`` on the specimen, axial stiffness ``stiffness`` (EA/L, N/m), whose material
(InitStrainMaterial) carries the imposed stroke s as its initial strain -s/L0: the truss is at rest at
length L0 + s.  A sample's strokes are imposed by static analyses of the whole model (large displacements:
the trusses turn with the attachment points); since a truss also stretches under its load, the lab raises
the imposed strokes by what each actuator fell short and solves again until every actuator's length is the
commanded stroke within ``stroke_tolerance`` (the ideal actuator: k_specimen / k_actuator per round, a few
rounds).  The load cells read the trusses' axial forces (pushing the specimen positive).

What this changes against driving the model at the setup's DOFs: the rig's geometry is in the model (the
actuators' lines of action turn with the specimen, their forces load the DOFs the setup leaves free, a
loading beam is as stiff as the model makes it), and the specimen's uncontrolled DOFs are where equilibrium
puts them, not where the setup assumes them (docs/setups.md).

Path: each round commits the model (OpenSees' static analysis does); the rounds approach the strokes from
one side, so a rate-independent material sees one monotonic increment.  A rewind re-imposes the committed
strokes (``path_independent``) or rebuilds the model and replays the committed strokes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.base import resolve_config_path
from hybridsim.modules.config_schema import Integer, Key, Number, Numbers, Schema, Tables
from hybridsim.modules.opensees import config as opensees_config
from hybridsim.modules.opensees import domain
from hybridsim.modules.opensees.lazy import ops
from hybridsim.modules.plant.specimen_kinds import specimen_schema
from hybridsim.wire.contract import ModuleError

ATTACHMENT = Schema("attachment", "One actuator of the rig in the model, in the lab's actuator order.", {
    "node": Key(Integer(1), "the model's node the actuator's rod end is pinned to", required=True),
    "base": Key(Numbers("m", (1,)), "the actuator's fixed end, in the model's coordinates", required=True),
    "stiffness": Key(Number("N/m", 0, open_minimum=True), "axial stiffness EA/L of the actuator, some 100 to "
                     "1000 times the specimen's along it (stiffer: fewer rounds, but its load cell rounds to about "
                     "stiffness x 1e-16 x length)", default=1e9),
})
KEYS = {
    "attachments": Key(Tables(ATTACHMENT), "coordinates = 'attachments': the actuators, one table each"),
    "stroke_tolerance": Key(Number("m", 0, open_minimum=True), "how close each actuator's length comes to its "
                            "stroke", default=1e-13),
    "max_rounds": Key(Integer(1), "stroke corrections per sample before the lab refuses", default=20),
    "reaction_cells": Key(Numbers("", (1,), Integer(1)), "node tags: the load cells are these supports (each node's force "
                          "components on its support, e.g. an inverted-V brace's feet: Fx, Fy, M) instead of the "
                          "actuators'"),
}
FIRST_TAG = 900_000
"""tags of the nodes, materials, elements and parameters the lab adds (above the model's)"""


class SimulatedDomain:
    """An openseespy specimen driven by actuator elements at its attachment points (see the module docstring);
    the virtual lab's specimen for ``coordinates = "attachments"``."""

    CONFIG = specimen_schema(opensees_config.CONFIG, KEYS, optional=("control",))
    """the declaration of an opensees specimen (every coordinates)"""

    def __init__(self, table: Mapping[str, Any], actuators: int, base_dir: Path | None = None) -> None:
        if "control" in table:
            raise ModuleError("specimen.control: a specimen driven at its attachment points has no control DOFs "
                              "(its actuators are specimen.attachments)")
        entries = table.get("attachments")
        if not isinstance(entries, list) or len(entries) != actuators:
            raise ModuleError(f"specimen.attachments: give one table (node, base) per actuator ({actuators})")
        self.model = resolve_config_path(base_dir or Path("."), table["model"], "specimen.model")
        self.parameters = dict(table.get("parameters", {}))
        self.path_independent = bool(table.get("path_independent", False))
        analysis = table.get("analysis", {})
        self.newton_tolerance = float(analysis.get("tolerance", 1e-12))
        self.newton_iterations = int(analysis.get("max_iterations", 25))
        self.algorithm = str(analysis.get("algorithm", "Newton"))
        self.nodes = [int(e["node"]) for e in entries]
        self.reaction_cells = [int(n) for n in table.get("reaction_cells", [])]
        self.cells = actuators
        """load-cell readings: the actuators', or the supports' of reaction_cells (set when the model is built)"""
        self.bases = [np.asarray(e["base"], float) for e in entries]
        self.stiffness = np.array([float(e.get("stiffness", 1e9)) for e in entries])
        self.tolerance = float(table.get("stroke_tolerance", 1e-13))
        self.max_rounds = int(table.get("max_rounds", 20))
        self._label = f"specimen ({self.model.name}, actuators at their attachment points)"
        self._build = domain.load_builder(self.model)
        self.rounds = 0
        """stroke corrections of the last sample"""
        self._path: list[np.ndarray] = []
        """committed strokes since the build (path-independent: the last only)"""
        self._fresh_model()
        self.rest_loads = self._impose(np.zeros(actuators))
        """the load cells at rest (N): what the model's own loads put on them"""

    # -- the model -----------------------------------------------------------
    def _fresh_model(self) -> None:
        domain.claim(self, self._label)
        try:
            domain.build_model(self._build, self.parameters, self.model)
            self._add_actuators()
            known = set(ops.getNodeTags())
            missing = [n for n in self.reaction_cells if n not in known]
            if missing:
                raise ModuleError(f"specimen.reaction_cells: the model has no node {missing[0]}")
            if self.reaction_cells:
                self.cells = sum(len(ops.nodeDisp(n)) for n in self.reaction_cells)
        except ModuleError:
            domain.release(self)
            raise
        analysis = {"constraints": ("Transformation",), "numberer": ("RCM",), "system": ("UmfPack",),
                    "test": ("NormDispIncr", self.newton_tolerance, self.newton_iterations),
                    "algorithm": (self.algorithm,), "integrator": ("LoadControl", 0.0), "analysis": ("Static",)}
        for command, arguments in analysis.items():  # a static step per round; no loads, the trusses move it
            getattr(ops, command)(*arguments)
        self._imposed = np.zeros(len(self.nodes))
        self._overshoot = np.zeros(len(self.nodes))
        """imposed minus reached strokes of the last sample (m): where the next sample's rounds start"""

    def _add_actuators(self) -> None:
        known = set(ops.getNodeTags())
        self.rest = np.empty(len(self.nodes))
        for i, (node, base) in enumerate(zip(self.nodes, self.bases)):
            where = f"specimen.attachments[{i}]"
            if node not in known:
                raise ModuleError(f"{where}.node: the model has no node {node}")
            end = np.asarray(ops.nodeCoord(node), float)
            if base.shape != end.shape:
                raise ModuleError(f"{where}.base: give {end.size} coordinates (the model's ndm), not {base.size}")
            self.rest[i] = float(np.linalg.norm(end - base))
            if not self.rest[i] > 0:
                raise ModuleError(f"{where}.base: the actuator's fixed end is on its attachment node")
            tag = FIRST_TAG + i
            ops.node(tag, *base.tolist())
            ops.fix(tag, *([1] * len(ops.nodeDisp(tag))))
            ops.uniaxialMaterial("Elastic", tag, self.stiffness[i] * self.rest[i])  # EA, with A = 1
            ops.uniaxialMaterial("InitStrainMaterial", FIRST_TAG + 100 + i, tag, 0.0)
            ops.element("corotTruss", tag, tag, node, 1.0, FIRST_TAG + 100 + i)
            ops.parameter(tag, "element", tag, "material", "epsInit")

    def lengths(self) -> np.ndarray:
        """The actuators' present strokes (m): length minus length at rest."""
        out = np.empty(len(self.nodes))
        for i, (node, base) in enumerate(zip(self.nodes, self.bases)):
            end = np.asarray(ops.nodeCoord(node), float) + np.asarray(ops.nodeDisp(node), float)[:base.size]
            out[i] = float(np.linalg.norm(end - base)) - self.rest[i]
        return out

    def _impose(self, strokes: np.ndarray) -> np.ndarray:
        """Bring every actuator to its stroke (m); the load cells' forces (N, pushing the specimen positive)."""
        self._imposed = strokes + self._overshoot
        for rounds in range(1, self.max_rounds + 1):
            for i, s in enumerate(self._imposed):
                ops.updateParameter(FIRST_TAG + i, -float(s) / self.rest[i])
            if ops.analyze(1) < 0:
                raise ModuleError(f"{self._label}: OpenSees did not converge imposing the strokes "
                                  f"{np.round(strokes * 1e3, 6).tolist()} mm")
            short = strokes - self.lengths()
            if np.max(np.abs(short)) <= self.tolerance:
                self.rounds = rounds
                self._overshoot = self._imposed - strokes
                return self._readings()
            self._imposed = self._imposed + short
        raise ModuleError(f"{self._label}: the actuators did not reach their strokes within {self.tolerance:g} m "
                          f"in {self.max_rounds} rounds (short by {np.max(np.abs(short)):.3g} m); raise their "
                          "stiffness or max_rounds")

    def _readings(self) -> np.ndarray:
        """The load cells (N, N*m): each actuator's force pushing the specimen, or what each reaction node puts
        on its support (minus its reaction)."""
        if not self.reaction_cells:
            return -np.array([ops.basicForce(FIRST_TAG + i)[0] for i in range(len(self.nodes))])
        ops.reactions()
        return -np.concatenate([np.asarray(ops.nodeReaction(node), float) for node in self.reaction_cells])

    # -- the lab's specimen --------------------------------------------------
    def commit(self, strokes: np.ndarray, tick: int) -> np.ndarray:
        """The load-cell forces (N) with the actuators at ``strokes`` (m); committed."""
        loads = self._impose(np.asarray(strokes, float))
        strokes = np.array(strokes, float)
        self._path = [strokes] if self.path_independent else [*self._path, strokes]
        return loads

    def probe(self, strokes: np.ndarray, tick: int) -> np.ndarray:
        """The load-cell forces (N) at ``strokes`` (m); the model goes back to its committed strokes after."""
        loads = self._impose(np.asarray(strokes, float))
        self._impose(self._path[-1] if self._path else np.zeros(len(self.nodes)))
        return loads

    def state(self) -> dict[str, Any]:
        return {"path": [s.tolist() for s in self._path]}

    def set_state(self, state: dict[str, Any]) -> None:
        path = [np.asarray(s, float) for s in state["path"]]
        if len(path) == len(self._path) and (not path or np.array_equal(path[-1], self._path[-1])):
            return
        if self.path_independent:
            self._impose(path[-1] if path else np.zeros(len(self.nodes)))
        else:
            self._fresh_model()
            for strokes in path:
                self._impose(strokes)
        self._path = path

    def close(self) -> None:
        domain.release(self)
