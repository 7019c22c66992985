"""The soil-foundation-structure system's cases: the hybrid run (the soil in an openseespy process behind OpenSees'
``adapter`` element, examples/ssi/soil_adapter.py; the footing and column as an ``opensees`` module in the
coordinator, or in PyNite behind a UI-SIMCOR interface program, examples/ssi/pynite_frame.py) against
examples/ssi/ssi_model.py built whole.  Coordinator DOFs: x, y of the three footing nodes (massless, unless a
share of the soil's mass is lumped there) and the column top's x (the structure's mass); the footing's
rotations and the top's y and rotation stay inside the frame module.

Also here: the pre-test's condensed soil stiffness (the coordinator's pre-test of the soil module alone) and
the direct static condensation of the soil's stiffness as OpenSees assembles it.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.problems.base import check_duration
from hybridsim.coordinator.problems.bridge.cases import (ALPHA, RECORD_FILE, adapter_peer, ended_on_die, free_port,
                                                         peer_process)

FOLDER = Path(__file__).resolve().parents[3] / "examples" / "ssi"
MODEL = FOLDER / "ssi_model.py"
SOIL = FOLDER / "soil_adapter.py"
PYNITE = FOLDER / "pynite_frame.py"
DOFS = ["footing1.x", "footing1.y", "footing2.x", "footing2.y", "footing3.x", "footing3.y", "top.x"]
RECORD = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2), (4, 1)]
"""(node, dof) of the whole model in the order of DOFS"""
POINTS = {"FOOTING-1": {"x": DOFS[0], "y": DOFS[1]}, "FOOTING-2": {"x": DOFS[2], "y": DOFS[3]},
          "FOOTING-3": {"x": DOFS[4], "y": DOFS[5]}, "TOP": {"x": DOFS[6]}}
"""the PyNite interface program's UI-SIMCOR control points"""
DT = 0.01
DAMPING = 0.5        # 1/s, mass-proportional
TOLERANCE = 1e-8     # m, NormDispIncr of the Newmark-Newton reference; the multi-yield soil's iterations stall
                     # at 1e-8 to 2e-7 m in a few steps (its stress update is not smooth where the active yield
                     # surface changes): those steps are taken after 50 iterations


def model_constants(path: Path = MODEL) -> Any:
    """examples/ssi/ssi_model.py (or another model file of the folder) as a module (its constants: TOP_MASS,
    SOIL_DENSITY, FOOTING, ...)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


SSI = model_constants()
DAM = FOLDER / "dam_model.py"
"""the earth-dam-like embankment with the same structure on its crest"""
MASS = SSI.TOP_MASS
COLUMN = SSI.SOIL_DENSITY * 1.0 * SSI.DEPTH
"""kg: the 1 m wide soil column under a footing node (10.8 t); the lumped cases put it, or its upper half, at
that node's x and y"""


@dataclass(frozen=True)
class Case:
    """One hybrid configuration and its reference."""

    key: str
    law: str = "elastic"     # the soil: elastic | pimy
    frame: str = "opensees"  # the footing and column: opensees (module in the coordinator) | pynite (its process)
    dt: float = DT           # s
    density: float = 0.0     # kg/m^3, the reference's soil (the hybrid's soil process is massless)
    lumped: float = 0.0      # kg of soil at each footing node's x and y, with the coordinator (not in the reference)
    footing_mass: float = 0.0  # kg at each footing node's x and y, in both
    model: Path = MODEL      # the model file: ssi_model.py (the soil block) or dam_model.py (an embankment)
    soil: str = "adapter"    # the soil module: adapter (massless, an OpenSees process behind the adapter element)
                             # | dynamic (an opensees site daemon that integrates the soil's mass: docs/dynamic_modules.md)
    alpha: float = ALPHA     # the coordinator's alpha-OS alpha (a yielding dynamic soil module integrates with 0)

    @property
    def reference(self) -> str:
        return "AlphaOS" if self.law == "elastic" else "Newmark-Newton"


CASES = {c.key: c for c in (
    Case("elastic"),
    Case("elastic-pynite", frame="pynite"),
    Case("pimy", law="pimy", footing_mass=SSI.FOOTING_MASS),
    Case("pimy-dt/2", law="pimy", dt=DT / 2, footing_mass=SSI.FOOTING_MASS),
    Case("pimy-dt/4", law="pimy", dt=DT / 4, footing_mass=SSI.FOOTING_MASS),
    Case("pimy-massless-footing", law="pimy"),
    Case("soil-mass-ignored", density=SSI.SOIL_DENSITY),
    Case("soil-mass-lumped-half", density=SSI.SOIL_DENSITY, lumped=COLUMN / 2),
    Case("soil-mass-lumped-column", density=SSI.SOIL_DENSITY, lumped=COLUMN),
    Case("soil-mass-module", density=SSI.SOIL_DENSITY, soil="dynamic"),
    Case("soil-mass-module-dt/2", dt=DT / 2, density=SSI.SOIL_DENSITY, soil="dynamic"),
    Case("soil-mass-module-dt/4", dt=DT / 4, density=SSI.SOIL_DENSITY, soil="dynamic"),
    Case("dam-mass-module", density=SSI.SOIL_DENSITY, soil="dynamic", model=DAM),
    *(Case(f"soil-mass-module-pimy{tail}", law="pimy", dt=DT / k, density=SSI.SOIL_DENSITY, soil="dynamic", alpha=0.0)
      for tail, k in (("", 1), ("-dt/2", 2), ("-dt/4", 4))),
)}


@dataclass
class Outcome:
    case: Case
    duration: float
    hybrid: np.ndarray            # rows x 7 (m)
    monolithic: np.ndarray        # rows x 7, the case's reference
    soil_force: np.ndarray        # rows x 6: the soil module's force at the footing DOFs (N)
    monolithic_soil_force: np.ndarray  # rows x 6: the soil elements' resisting force there in the reference (N)
    wall_s: float
    alpha_os: np.ndarray          # rows x 7: the whole model under AlphaOS (= monolithic for an elastic soil)

    @property
    def max_rel_diff(self) -> float:
        """max |hybrid - monolithic| / max |monolithic| of the column top's x"""
        return relative(self.hybrid, self.monolithic)

    @property
    def max_rel_diff_alpha_os(self) -> float:
        """the same against OpenSees' AlphaOS (for the yielding soil: the same scheme, not the converged one)"""
        return relative(self.hybrid, self.alpha_os)

    @property
    def force_rel_diff(self) -> float:
        """max |soil force, hybrid - monolithic| / max |monolithic| over the footing DOFs; NaN for a dynamic soil
        module, whose force is alpha-OS's weighted interface force with its inertia (docs/dynamic_modules.md)"""
        if self.case.soil == "dynamic":
            return float("nan")
        return float(np.max(np.abs(self.soil_force - self.monolithic_soil_force))
                     / np.max(np.abs(self.monolithic_soil_force)))


def relative(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max |b| of the column top's x"""
    return float(np.max(np.abs(a[:, -1] - b[:, -1])) / np.max(np.abs(b[:, -1])))


def frame_module(case: Case, address: str) -> dict[str, Any]:
    """The footing and column: an ``opensees`` module here, or the PyNite process behind UI-SIMCOR's protocol."""
    if case.frame == "pynite":
        return {"name": "frame", "kind": "simcor", "address": address, "deadline_s": 60.0,
                "config": {"dofs": DOFS, "control_points": POINTS, "protocol": "LabView1", "session": "ssi"}}
    return {"name": "frame", "kind": "opensees",
            "config": {"model": str(MODEL), "parameters": {"part": "frame"}, "path_independent": True,
                       "control": [{"name": n, "node": node, "dof": dof} for n, (node, dof) in zip(DOFS, RECORD)]}}


def soil_module(case: Case, address: str, ground: np.ndarray) -> dict[str, Any]:
    """The soil: the adapter process at ``address`` (massless), or an ``opensees`` site daemon the coordinator
    starts that integrates the soil's mass (``ground``: the coordinator's record at dt, m/s^2)."""
    if case.soil == "adapter":
        return {"name": "soil", "kind": "openfresco", "address": address, "deadline_s": 60.0,
                "config": {"dofs": DOFS[:6], "server": "adapter"}}
    constants = model_constants(case.model)
    footing = [constants.soil_node(x, constants.DEPTH) for x in constants.FOOTING]
    elastic = case.law == "elastic"
    return {"name": "soil", "kind": "opensees", "address": "local", "config": {
        "model": str(case.model), "parameters": {"part": "soil", "density": case.density, "law": case.law},
        "path_independent": elastic,
        "control": [{"name": n, "node": footing[i // 2], "dof": 1 + i % 2} for i, n in enumerate(DOFS[:6])],
        "dynamic": {"alpha": case.alpha, "direction": 1, "rayleigh": [DAMPING, 0.0], "ground_acceleration_dt": case.dt,
                    "ground_acceleration": [float(a) for a in ground],
                    **({} if elastic else {"integrator": "opensees", "tolerance": TOLERANCE, "accept_stalled": True})}}}


def experiment_table(case: Case, duration: float, soil: str, frame: str, output: Path,
                     ground: np.ndarray = np.zeros(1)) -> dict[str, Any]:
    """The experiment: 7 DOFs, the top's mass (and a lumped soil share at the footing), two modules."""
    footing = case.lumped + case.footing_mass
    excited = ["footing1.x", "footing2.x", "footing3.x"] if footing else []
    return {
        "experiment": {"name": f"ssi-{case.key.replace('/', '_')}", "dt": case.dt, "duration": duration},
        "structure": {"dofs": DOFS, "mass_diagonal": [footing] * 6 + [MASS],
                      "damping": {"rayleigh": [DAMPING, 0.0]}, "influence_dofs": excited + ["top.x"]},
        "ground_motion": {"file": RECORD_FILE},
        "integrator": {"kind": "alpha-os", "alpha": case.alpha},
        "modules": [
            frame_module(case, frame),
            soil_module(case, soil, ground),
        ],
        "output": {"file": str(output)},
    }


def soil_forces() -> list[float]:
    """The soil elements' resisting forces (N) at the three surface nodes under the footing, x and y each: of
    the two quads below each node, the left one has it as its 3rd node, the right one as its 4th."""
    import openseespy.opensees as ops

    top = SSI.DEPTH - 1
    out: list[float] = []
    for x in SSI.FOOTING:
        left, right = ops.eleForce(1 + top * SSI.WIDTH + x - 1), ops.eleForce(1 + top * SSI.WIDTH + x)
        out += [left[4] + right[6], left[5] + right[7]]
    return out


def monolithic(case: Case, acceleration: np.ndarray, implicit: bool) -> np.ndarray:
    """The whole model: rows x 13 = the 7 DOFs' displacements, then :func:`soil_forces`.  AlphaOS (the
    coordinator's scheme, alpha = ALPHA), or ``implicit``: Newmark's average acceleration (OpenSees' HHT with
    alpha 1) with Newton iterations, every DOF in equilibrium at every step."""
    from hybridsim.modules.opensees.monolithic import alpha_os_response

    extra = soil_forces if case.model == MODEL else (lambda: [float("nan")] * 6)  # the block's element numbering
    return alpha_os_response(case.model, {"part": "whole", "mass": MASS, "law": case.law, "density": case.density,
                                     "footing_mass": case.footing_mass},
                             dt=case.dt, ground_acceleration=acceleration, alpha=0.0 if implicit else ALPHA,
                             record=RECORD,
                             rayleigh=(DAMPING, 0.0), implicit=implicit, tolerance=TOLERANCE, accept_stalled=True,
                             extra=extra)


def run_case(case: Case, duration: float) -> Outcome:
    """Run the hybrid (starting the soil's OpenSees process, and PyNite's for that frame) and the reference."""
    from hybridsim.coordinator.experiment import parse_experiment
    from hybridsim.coordinator.recorder import read_results
    from hybridsim.coordinator.simulation import run_experiment

    check_duration(duration, RECORD_FILE)
    with tempfile.TemporaryDirectory(prefix="ssi-") as scratch:
        out = Path(scratch) / "ssi.h5"
        soil_port, frame_port = free_port(), free_port()
        with contextlib.ExitStack() as peers:
            soil = (peers.enter_context(adapter_peer(soil_port, SOIL, case.law)) if case.soil == "adapter"
                    else None)
            frame = (peers.enter_context(peer_process([str(PYNITE), str(frame_port)])) if case.frame == "pynite"
                     else None)
            addresses = (case, duration, f"127.0.0.1:{soil_port}", f"127.0.0.1:{frame_port}", out)
            experiment = parse_experiment(experiment_table(*addresses), base_dir=FOLDER)
            if case.soil == "dynamic":  # the module takes the coordinator's record as the coordinator reads it
                experiment = parse_experiment(experiment_table(*addresses, experiment.motion.acceleration),
                                              base_dir=FOLDER)
            start = time.perf_counter()
            run_experiment(experiment, output=out, overwrite=True)
            wall = time.perf_counter() - start
            if soil is not None:
                ended_on_die(soil, "the soil")
            if frame is not None:
                ended_on_die(frame, "PyNite's interface program", "session closed")
        stored = read_results(out)
        hybrid, forces = stored["displacement"], stored["modules/soil/force"]
    acceleration = experiment.motion.acceleration
    alpha_os = monolithic(case, acceleration, implicit=False)
    reference = alpha_os if case.law == "elastic" else monolithic(case, acceleration, implicit=True)
    return Outcome(case, duration, hybrid, reference[:, :7], forces, reference[:, 7:], wall, alpha_os[:, :7])


def pretest_soil(law: str = "elastic", amplitude: float = 1e-5) -> tuple[np.ndarray, float]:
    """The soil's stiffness at the six footing DOFs (N/m) as the coordinator's pre-test measures it through the
    adapter process, and its asymmetry before symmetrisation."""
    from hybridsim.coordinator.partition import ModuleSlot, Partition
    from hybridsim.coordinator.pretest import pretest
    from hybridsim.modules.registry import build_module
    from hybridsim.wire.contract import Session

    port = free_port()
    with adapter_peer(port, SOIL, law) as peer:
        module = build_module("openfresco", {"address": f"127.0.0.1:{port}", "dofs": DOFS[:6], "server": "adapter",
                                             "deadline_s": 60.0})
        partition = Partition(6, [ModuleSlot("soil", module, module.describe(), np.arange(6), "adapter process")])
        partition.open(lambda slot: Session(DT, tuple(DOFS[:6]), run_id="ssi-pretest"))
        try:
            measured = pretest(partition, amplitude)
        finally:
            partition.close()
        ended_on_die(peer, "the soil")
    return measured.stiffness, measured.asymmetry


def condensed_soil(law: str = "elastic") -> np.ndarray:
    """The soil's stiffness condensed to the six footing DOFs (N/m): OpenSees assembles the soil's tangent at
    rest (a FullGeneral static system, ``printA``), then K_ff - K_fi K_ii^-1 K_if."""
    import openseespy.opensees as ops

    from hybridsim.modules.opensees import domain

    with domain.held("the soil's static condensation"):
        domain.build_model(domain.load_builder(MODEL), {"part": "soil", "law": law}, MODEL)
        ops.constraints("Plain")
        ops.numberer("Plain")
        ops.system("FullGeneral")
        ops.test("NormDispIncr", 1e-12, 2)
        ops.algorithm("Linear")
        ops.integrator("LoadControl", 1.0)
        ops.analysis("Static")
        if ops.analyze(1) != 0:
            raise UsageError("OpenSees could not form the soil's stiffness")
        matrix = np.array(ops.printA("-ret"))
        footing = [eq for x in SSI.FOOTING for eq in ops.nodeDOFs(SSI.soil_node(x, SSI.DEPTH))]
    n = round(np.sqrt(matrix.size))
    matrix = matrix.reshape(n, n)
    inner = np.setdiff1d(np.arange(n), footing)
    kff, kfi, kii = matrix[np.ix_(footing, footing)], matrix[np.ix_(footing, inner)], matrix[np.ix_(inner, inner)]
    return kff - kfi @ np.linalg.solve(kii, kfi.T)
