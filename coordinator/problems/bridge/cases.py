"""The bridge's cases: the hybrid run (three modules, three processes) and its monolithic OpenSees reference.

Modules (coordinator DOFs: x, y, rotation of the three pier tops; masses at x and y, none on rotations):

- ``left``: an experimental site daemon (``address = "local"``), setup ``three-actuators-2d`` (lateral,
  vertical, rotation at the pier top), its virtual lab driving an openseespy model of the left pier;
- ``middle``: the middle pier and the whole deck, an ``opensees`` module in the coordinator's process;
- ``right``: the right pier in its own openseespy process behind OpenSees' ``adapter`` element
  (``openfresco`` kind, ``server = "adapter"``; examples/bridge/adapter_pier.py).

The reference: examples/bridge/bridge_model.py built whole, under OpenSees' AlphaOS (``Linear -initial``,
the coordinator's scheme) and, for the yielding pier, HHT with Newton iterations (the same alpha).
"""

from __future__ import annotations

import contextlib
import math
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.errors import RunStopped, UsageError

FOLDER = Path(__file__).resolve().parents[3] / "examples" / "bridge"
MODEL = FOLDER / "bridge_model.py"
DOFS = [f"{pier}.{d}" for pier in ("left", "middle", "right") for d in ("x", "y", "theta")]
RECORD = [(top, dof) for top in (11, 12, 13) for dof in (1, 2, 3)]
"""(node, dof) of the whole model in the order of DOFS"""
DT = 0.01            # s
ALPHA = -0.05
DAMPING = 1.0        # 1/s, mass-proportional: 2 % at the first mode (~4 Hz)
RECORD_FILE = "hybridsim:marths/ground_motion_elcentro.csv"
PENALTY = 1.0e15     # the adapter element's penalty stiffness (N/m, N*m/rad)
BANDWIDTH = 700.0    # rad/s, first-order actuators a/(s + a): a lag of about 1/a = 1.4 ms
CONTROL_SAMPLES = 5  # control samples per coordinator step with lagging actuators


def zoh_delay(sample_period: float) -> float:
    """The delay (s) a compensator assumes for the first-order actuator sampled every ``sample_period``: the
    ZOH discretisation y+ = alpha y + (1 - alpha) u, alpha = exp(-a dt), lags by alpha dt / (1 - alpha)."""
    alpha = math.exp(-BANDWIDTH * sample_period)
    return alpha * sample_period / (1.0 - alpha)


@dataclass(frozen=True)
class Case:
    """One hybrid configuration: the left pier's law, its actuators and their compensation."""

    key: str
    law: str = "elastic"              # elastic | steel01
    actuators: str = "ideal"          # ideal | first-order
    compensator: dict = field(default_factory=lambda: {"kind": "none"})
    scale: float = 1.0                # of the El Centro record
    dt: float = DT                    # s, the coordinator's step

    @property
    def reference(self) -> str:
        return "AlphaOS" if self.law == "elastic" else "HHT-Newton"


CASES = {c.key: c for c in (
    Case("linear-ideal"),
    Case("steel01-ideal", law="steel01"),
    Case("steel01-ideal-dt/2", law="steel01", dt=DT / 2),
    Case("linear-first-order", actuators="first-order"),
    Case("linear-first-order-polynomial", actuators="first-order", compensator={"kind": "polynomial", "order": 2}),
    Case("linear-first-order-inverse", actuators="first-order", compensator={"kind": "inverse"}),
)}


@dataclass
class Outcome:
    case: Case
    duration: float
    hybrid: np.ndarray      # steps+1 x 9 (m, rad)
    monolithic: np.ndarray  # steps+1 x 9
    restoring_force: np.ndarray  # steps+1 x 9, the three modules' sum (N, N*m)
    wall_s: float
    alpha_os: np.ndarray         # the whole bridge under OpenSees AlphaOS (= monolithic for the elastic cases)
    stopped: str = ""            # why the hybrid run stopped early ("" if it ran to the end); arrays: the steps done

    @property
    def max_rel_diff(self) -> float:
        """max over time and the three pier tops' x of |hybrid - monolithic| / max |monolithic|"""
        return relative(self.hybrid, self.monolithic)

    @property
    def max_rel_diff_alpha_os(self) -> float:
        """the same against OpenSees' AlphaOS (for a yielding pier: the same scheme, not the converged one)"""
        return relative(self.hybrid, self.alpha_os)


def relative(a: np.ndarray, b: np.ndarray) -> float:
    """max over time and the pier tops' x of |a - b| / max |b|"""
    x = [0, 3, 6]
    return float(np.max(np.abs(a[:, x] - b[:, x])) / np.max(np.abs(b[:, x])))


def site_table(case: Case) -> dict[str, Any]:
    """The left pier's experimental site: three actuators on a loading beam at the pier top, a virtual lab."""
    samples = 1 if case.actuators == "ideal" else CONTROL_SAMPLES
    dt = case.dt / samples
    actuator = {"model": "ideal"} if case.actuators == "ideal" else {"model": "first-order", "bandwidth": BANDWIDTH}
    compensator = dict(case.compensator)
    if compensator["kind"] != "none":
        compensator.update(sample_period=dt, delay=zoh_delay(dt))
    return {
        "dt": dt,
        "dofs": DOFS[:3],
        "setup": {"kind": "three-actuators-2d", "lengths": [1.5, 1.2, 1.2], "spacing": [0.6, 0.6],
                  "side": "left", "stroke_range": [[-0.3, 0.3]] * 3},
        "actuators": [{"compensator": compensator, "force": 5.0e6} for _ in range(3)],
        "backend": {"plant": {
            "dt": dt, "dofs": ["horizontal", "left", "right"], "actuators": [actuator] * 3,
            "specimen": {"kind": "opensees", "model": str(MODEL), "parameters": {"part": "left", "law": case.law},
                         "path_independent": case.law == "elastic",
                         "control": [{"name": n, "node": 11, "dof": d} for n, d in (("x", 1), ("y", 2), ("theta", 3))]},
        }},
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_adapter(port: int, script: Path = FOLDER / "adapter_pier.py") -> subprocess.Popen:
    """The openseespy process of ``script`` (the right pier); its adapter element waits for the coordinator's
    connection (the ``openfresco`` kind connects with retries while refused)."""
    return subprocess.Popen([sys.executable, str(script), str(port), repr(PENALTY)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


@contextlib.contextmanager
def adapter_peer(port: int, script: Path = FOLDER / "adapter_pier.py") -> Iterator[subprocess.Popen]:
    """:func:`start_adapter`, killed on the way out if it is still running."""
    peer = start_adapter(port, script)
    try:
        yield peer
    finally:
        if peer.poll() is None:
            peer.kill()
            peer.wait(10)


def ended_on_die(peer: subprocess.Popen, what: str) -> None:
    """RunStopped unless the adapter process ended as the client's DIE ends it."""
    _, err = peer.communicate(timeout=30)
    if "successfully completed" not in err:
        raise RunStopped(f"{what}'s OpenSees process did not end on DIE: {err[-2000:]}")


def model_constant(name: str) -> float:
    """A constant of examples/bridge/bridge_model.py (TOP_MASS, ...)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bridge_model", MODEL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return float(getattr(module, name))


def hybrid_table(case: Case, duration: float, adapter: str, output: Path) -> dict[str, Any]:
    """The experiment: 9 DOFs, masses at the tops (x, y), the record along x, three modules."""
    mass = model_constant("TOP_MASS")
    return {
        "experiment": {"name": f"bridge-{case.key.replace('/', '_')}", "dt": case.dt, "duration": duration},
        "structure": {"dofs": DOFS, "mass_diagonal": [mass, 0.0, 0.0] * 3, "damping": {"rayleigh": [DAMPING, 0.0]},
                      "influence_dofs": ["left.x", "middle.x", "right.x"]},
        "ground_motion": {"file": RECORD_FILE, "scale": case.scale},
        "integrator": {"kind": "alpha-os", "alpha": ALPHA},
        "modules": [
            {"name": "left", "kind": "experimental", "address": "local", "deadline_s": 60.0,
             "config": site_table(case)},
            {"name": "middle", "kind": "opensees",
             "config": {"model": str(MODEL), "parameters": {"part": "middle"}, "path_independent": True,
                        "control": [{"name": n, "node": node, "dof": dof} for n, (node, dof) in zip(DOFS, RECORD)]}},
            {"name": "right", "kind": "openfresco", "address": adapter, "deadline_s": 60.0,
             "config": {"dofs": DOFS[6:], "server": "adapter"}},
        ],
        "output": {"file": str(output)},
    }


def monolithic(case: Case, experiment: Any, implicit: bool) -> np.ndarray:
    """The whole bridge in one OpenSees model: AlphaOS (``Linear -initial``) or HHT with Newton iterations."""
    from hybridsim.modules.opensees.monolithic import alpha_os_response

    return alpha_os_response(MODEL, {"part": "whole", "law": case.law}, dt=case.dt,
                             ground_acceleration=experiment.motion.acceleration, alpha=ALPHA, record=RECORD,
                             rayleigh=(DAMPING, 0.0), implicit=implicit)


def run_case(case: Case, duration: float, folder: Path | None = None) -> Outcome:
    """Run the hybrid (starting the right pier's OpenSees process) and the monolithic model."""
    from hybridsim.coordinator.experiment import parse_experiment
    from hybridsim.coordinator.recorder import read_results
    from hybridsim.coordinator.simulation import run_experiment

    if duration <= 0:
        raise UsageError(f"--duration must be > 0 s, not {duration}")
    with tempfile.TemporaryDirectory(prefix="bridge-") as scratch:
        out = Path(folder or scratch) / f"{case.key.replace('/', '_')}.h5"
        port = free_port()
        stopped = ""
        with adapter_peer(port) as peer:
            table = hybrid_table(case, duration, f"127.0.0.1:{port}", out)
            experiment = parse_experiment(table, base_dir=FOLDER)
            start = time.perf_counter()
            try:
                run_experiment(experiment, output=out, overwrite=True)
            except RunStopped as exc:  # e.g. lagging actuators driving the response unstable: keep the steps done
                stopped = str(exc)
            wall = time.perf_counter() - start
            if not stopped:
                ended_on_die(peer, "the right pier")
        stored = read_results(out)  # the completed steps, read while the file exists
        hybrid, forces = stored["displacement"], stored["restoring_force"]
    alpha_os = monolithic(case, experiment, implicit=False)
    converged = monolithic(case, experiment, implicit=True) if case.law != "elastic" else alpha_os
    rows = hybrid.shape[0]
    return Outcome(case, duration, hybrid, converged[:rows], forces, wall, alpha_os[:rows], stopped)
