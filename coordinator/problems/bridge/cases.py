"""The bridge's cases: the hybrid run (three modules, three processes) and its monolithic OpenSees reference.

Modules (coordinator DOFs: x, y, rotation of the three pier tops; masses at x and y, none on rotations):

- ``left``: an experimental site daemon (``address = "local"``, or ``hybridsim site experimental`` on a port of
  its own that the study starts and stops), setup ``three-actuators-2d`` (lateral, vertical, rotation at the
  pier top), its virtual lab driving an openseespy model of the left pier;
- ``middle``: the middle pier and the whole deck, an ``opensees`` module in the coordinator's process;
- ``right``: the right pier in its own openseespy process behind OpenSees' ``adapter`` element
  (``openfresco`` kind, ``server = "adapter"``; examples/bridge/adapter_pier.py).

A ``restart`` case takes checkpoints, kills the right pier's process (SIGKILL) mid-run, starts it again at the
same port and resumes the run from its last checkpoint (``hybridsim resume``); it is compared with the same run
uninterrupted.  The reference: examples/bridge/bridge_model.py built whole, under OpenSees' AlphaOS (``Linear -initial``,
the coordinator's scheme) and, for the yielding pier, HHT with Newton iterations (the same alpha).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.problems.base import check_duration

FOLDER = Path(__file__).resolve().parents[3] / "examples" / "bridge"
MODEL = FOLDER / "bridge_model.py"
DOFS = [f"{pier}.{d}" for pier in ("left", "middle", "right") for d in ("x", "y", "theta")]
RECORD = [(top, dof) for top in (11, 12, 13) for dof in (1, 2, 3)]
"""(node, dof) of the whole model in the order of DOFS"""
DT = 0.01            # s
ALPHA = -0.05
DAMPING = 1.0        # 1/s, mass-proportional: 1.5 % at the first mode (5.24 Hz)
RECORD_FILE = "hybridsim:marths/ground_motion_elcentro.csv"
PENALTY = 1.0e15     # the adapter element's penalty stiffness (N/m, N*m/rad)
BANDWIDTH = 700.0    # rad/s, first-order actuators a/(s + a): a lag of about 1/a = 1.4 ms
CONTROL_SAMPLES = 5  # control samples per coordinator step with lagging actuators
STROKE_NOISE = 2.0e-6  # m, standard deviation of each stroke sensor in a noisy case (a good LVDT)
LOAD_CELL_NOISE = 100.0  # N, of each load cell (2e-5 of its 5 MN range)
CHECKPOINT_EVERY = 100  # steps, in a restart case
KILLED_AT = 0.7      # of the run's steps: where a restart case kills the right pier's process (+ 37 steps)


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
    left: str = "local"               # local (a daemon the coordinator starts) | port (one the study starts)
    restart: bool = False             # the right pier's process killed mid-run, restarted, the run resumed
    noisy: bool = False               # the lab's sensors with white noise (STROKE_NOISE, LOAD_CELL_NOISE)

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
    Case("linear-first-order-rls", actuators="first-order", compensator={"kind": "rls"}),
    Case("linear-first-order-narx", actuators="first-order", compensator={"kind": "narx"}),
    Case("linear-ideal-own-port", left="port"),
    Case("linear-ideal-restart", left="port", restart=True),
    Case("linear-ideal-noisy-sensors", noisy=True),
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
    module_forces: dict[str, np.ndarray] = field(default_factory=dict)
    """name: steps+1 x its DOFs (N, N*m), each module's force at the committed displacement (committed_forces)"""
    monolithic_module_forces: dict[str, np.ndarray] = field(default_factory=dict)
    """the same parts' models along the monolithic displacement (module_forces)"""
    uninterrupted: np.ndarray | None = None  # a restart case: the same run without the kill
    restart: dict[str, Any] = field(default_factory=dict)  # a restart case: killed_at_step, resumed_from_step

    @property
    def max_rel_diff(self) -> float:
        """max over time and the three pier tops' x of |hybrid - monolithic| / max |monolithic|"""
        return relative(self.hybrid, self.monolithic)

    @property
    def max_rel_diff_alpha_os(self) -> float:
        """the same against OpenSees' AlphaOS (for a yielding pier: the same scheme, not the converged one)"""
        return relative(self.hybrid, self.alpha_os)

    @property
    def lateral_forces(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """module: (hybrid, monolithic) lateral force (N) over time: the sum of its x forces, its piers' base
        shear (the deck inside the middle module carries none to the ground)"""
        return {m: tuple(np.sum(f[m][:, [i for i, d in enumerate(PARTS[m]) if d % 3 == 0]], axis=1)
                         for f in (self.module_forces, self.monolithic_module_forces)) for m in PARTS}

    @property
    def force_rel_diff(self) -> dict[str, float]:
        """module: max |hybrid - monolithic| / max |monolithic| of its lateral force"""
        return {m: float(np.max(np.abs(h - r)) / np.max(np.abs(r))) for m, (h, r) in self.lateral_forces.items()}

    @property
    def resumed_vs_uninterrupted(self) -> float | None:
        """a restart case: the same measure between the resumed run and the uninterrupted one (None: not one)"""
        return None if self.uninterrupted is None else relative(self.hybrid, self.uninterrupted)


def relative(a: np.ndarray, b: np.ndarray) -> float:
    """max over time and the pier tops' x of |a - b| / max |b|"""
    x = [0, 3, 6]
    return float(np.max(np.abs(a[:, x] - b[:, x])) / np.max(np.abs(b[:, x])))


def site_table(case: Case) -> dict[str, Any]:
    """The left pier's experimental site: three actuators on a loading beam at the pier top, a virtual lab."""
    samples = 1 if case.actuators == "ideal" else CONTROL_SAMPLES
    dt = case.dt / samples
    actuator = {"model": "ideal"} if case.actuators == "ideal" else {"model": "first-order", "bandwidth": BANDWIDTH}
    compensator = compensator_table(case.compensator["kind"], dt)
    return {
        "dt": dt,
        "dofs": DOFS[:3],
        "setup": {"kind": "three-actuators-2d", "lengths": [1.5, 1.2, 1.2], "spacing": [0.6, 0.6],
                  "side": "left", "stroke_range": [[-0.3, 0.3]] * 3},
        "actuators": [{"compensator": compensator, "force": 5.0e6} for _ in range(3)],
        "backend": {"plant": {
            "dt": dt, "dofs": ["horizontal", "left", "right"], "actuators": [actuator] * 3,
            **({"noise": {"sigma": STROKE_NOISE, "seed": 1}, "load_cells": {"sigma": LOAD_CELL_NOISE, "seed": 2}}
               if case.noisy else {}),
            "specimen": {"kind": "opensees", "model": str(MODEL), "parameters": {"part": "left", "law": case.law},
                         "path_independent": case.law == "elastic",
                         "control": [{"name": n, "node": 11, "dof": d} for n, d in (("x", 1), ("y", 2), ("theta", 3))]},
        }},
    }


def compensator_table(kind: str, sample_period: float) -> dict[str, Any]:
    """One actuator's compensator (strokes in mm); the trials before these choices are in docs/bridge.md:

    - ``polynomial`` (order 2) and ``inverse``: the delay of the ZOH first-order actuator (:func:`zoh_delay`);
    - ``rls``: RLS-AC from the inverse compensator's taps (a0, 1 - a0, 0, 0), as maRTHS starts from taps
      calibrated offline, P0 = I per mm^2, no forgetting, the maRTHS definition's 4th-order 20 Hz Butterworth
      at this sample rate on both signals;
    - ``narx``: order 1 (lags 0 and 1: the structure of the first-order actuator's exact inverse), OLS over a
      sliding window of 256 samples (half a second), parameters held until the window's commands exceed
      0.01 mm rms (the record's quiet first 5 s give no information); trained online: there is no offline
      training data for this rig.
    """
    from hybridsim.modules.experimental.compensators.filters import butterworth

    if kind in ("polynomial", "inverse"):
        return {"kind": kind, **({"order": 2} if kind == "polynomial" else {}), "sample_period": sample_period,
                "delay": zoh_delay(sample_period)}
    if kind == "rls":
        b, a = butterworth(4, 20.0, 1.0 / sample_period)
        a0 = 1.0 + zoh_delay(sample_period) / sample_period
        return {"kind": "rls", "theta0": [a0, 1.0 - a0, 0.0, 0.0], "p0": np.eye(4).tolist(),
                "filter_b": b, "filter_a": a, "forgetting": 1.0}
    if kind == "narx":
        return {"kind": "narx", "order": 1, "window": 256, "ridge": 0.0, "excitation": 0.01}
    return {"kind": kind}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_process(args: Sequence[str]) -> subprocess.Popen:
    """A Python program ``args`` (script and its arguments) in a process of its own, its stderr kept."""
    return subprocess.Popen([sys.executable, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


@contextlib.contextmanager
def peer_process(args: Sequence[str]) -> Iterator[subprocess.Popen]:
    """:func:`start_process`, killed on the way out if it is still running."""
    peer = start_process(args)
    try:
        yield peer
    finally:
        if peer.poll() is None:
            peer.kill()
            peer.wait(10)


def adapter_peer(port: int, script: Path = FOLDER / "adapter_pier.py", *extra: str
                 ) -> contextlib.AbstractContextManager[subprocess.Popen]:
    """The openseespy process of ``script`` (the right pier; arguments PORT PENALTY ``extra``), killed on the
    way out if still running; its adapter element waits for the coordinator's connection (the ``openfresco``
    kind connects with retries while refused)."""
    return peer_process([str(script), str(port), repr(PENALTY), *extra])


def ended_on_die(peer: subprocess.Popen, what: str, mark: str = "successfully completed") -> None:
    """RunStopped unless the peer process ended as the client's DIE (or close) ends it: ``mark`` on its stderr
    (OpenSees' words by default)."""
    _, err = peer.communicate(timeout=30)
    if mark not in err:
        raise RunStopped(f"{what}'s process did not end on the client's last message: {err[-2000:]}")


def model_constant(name: str) -> float:
    """A constant of examples/bridge/bridge_model.py (TOP_MASS, ...)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bridge_model", MODEL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return float(getattr(module, name))


PARTS = {"left": range(0, 3), "middle": range(0, 9), "right": range(6, 9)}
"""each module's DOFs: indices into DOFS"""
PROBE = 1.0e-6
"""m or rad: the displacement :func:`part_stiffness` imposes at one DOF at a time (elastic: any size will do)"""


def opensees_part(part: str, law: str = "elastic") -> dict[str, Any]:
    """The ``opensees`` module config of one part of the bridge, controlled at its pier tops' x, y, theta."""
    return {"model": str(MODEL), "parameters": {"part": part, **({"law": law} if part == "left" else {})},
            "path_independent": part != "left" or law == "elastic",
            "control": [{"name": DOFS[i], "node": RECORD[i][0], "dof": RECORD[i][1]} for i in PARTS[part]]}


def module_forces(law: str, dt: float, displacement: np.ndarray) -> dict[str, np.ndarray]:
    """What each part's openseespy model answers along a displacement history of the nine DOFs (steps x 9):
    its restoring forces (steps x its DOFs; N, N*m), the parts driven in turn by the ``opensees`` kind."""
    from hybridsim.modules.registry import build_module
    from hybridsim.wire.contract import Command, Session

    forces = {}
    for part, index in PARTS.items():
        module = build_module("opensees", opensees_part(part, law), FOLDER)
        module.open(Session(dt, tuple(DOFS[i] for i in index), run_id=f"forces-{part}"))
        try:
            rows = []
            for n, row in enumerate(displacement):
                module.propose(n, Command(n * dt, row[index]))
                rows.append(module.execute(n).force)
                module.commit(n)
        finally:
            module.close()
        forces[part] = np.array(rows)
    return forces


def part_stiffness() -> dict[str, np.ndarray]:
    """Each part's initial (elastic) stiffness at its DOFs, column j the forces for a unit displacement at DOF j
    (N/m, N/rad, N*m/rad): what the coordinator's K_I holds of it."""
    probes = np.vstack([np.zeros(9), PROBE * np.eye(9)])
    forces = module_forces("elastic", DT, probes)
    return {part: forces[part][1 + np.array(index)].T / PROBE for part, index in PARTS.items()}


def committed_forces(stored: dict[str, Any]) -> dict[str, np.ndarray]:
    """Each module's restoring force at the committed displacement as the coordinator's alpha-OS takes it:
    measured at the predictor (what the module reached), corrected by its initial stiffness,
    r_m(d~) + K_I,m (d - d~) (N, N*m; steps x its DOFs)."""
    stiffness = part_stiffness()
    return {part: stored[f"modules/{part}/force"]
            + (stored["displacement"][:, index] - stored[f"modules/{part}/displacement"]) @ stiffness[part].T
            for part, index in PARTS.items()}


def hybrid_table(case: Case, duration: float, adapter: str, output: Path, left: str = "local") -> dict[str, Any]:
    """The experiment: 9 DOFs, masses at the tops (x, y), the record along x, three modules; ``left``: the left
    pier's address (``local``: a daemon the coordinator starts with the site table; else the site's own)."""
    mass = model_constant("TOP_MASS")
    site = {"config": site_table(case)} if left == "local" else {}
    return {
        "experiment": {"name": f"bridge-{case.key.replace('/', '_')}", "dt": case.dt, "duration": duration},
        "structure": {"dofs": DOFS, "mass_diagonal": [mass, 0.0, 0.0] * 3, "damping": {"rayleigh": [DAMPING, 0.0]},
                      "influence_dofs": ["left.x", "middle.x", "right.x"]},
        "ground_motion": {"file": RECORD_FILE, "scale": case.scale},
        "integrator": {"kind": "alpha-os", "alpha": ALPHA},
        "modules": [
            {"name": "left", "kind": "experimental", "address": left, "deadline_s": 60.0, **site},
            {"name": "middle", "kind": "opensees", "config": opensees_part("middle")},
            {"name": "right", "kind": "openfresco", "address": adapter, "deadline_s": 60.0,
             "config": {"dofs": DOFS[6:], "kinds": ["translation", "translation", "rotation"], "server": "adapter",
                        "path_independent": True}},
        ],
        "output": {"file": str(output), "checkpoint_every": CHECKPOINT_EVERY if case.restart else 0},
    }


@contextlib.contextmanager
def site_daemon(case: Case, folder: Path) -> Iterator[str]:
    """``hybridsim site experimental`` with the left pier's site table on a free loopback port (paths from
    examples/bridge), stopped (SIGTERM) on the way out; yields its address HOST:PORT."""
    config, port_file = folder / "left_site.json", folder / "left_site.port"
    config.write_text(json.dumps(site_table(case)))
    address = f"127.0.0.1:{free_port()}"
    site = subprocess.Popen([sys.executable, "-m", "hybridsim", "site", "experimental", "--config", str(config),
                             "--base-dir", str(FOLDER), "--name", "left-pier", "--listen", address,
                             "--port-file", str(port_file)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists():
            if site.poll() is not None:
                raise RunStopped(f"the left pier's site daemon ended while starting: {site.communicate()[1][-2000:]}")
            if time.monotonic() > deadline:
                raise RunStopped("the left pier's site daemon did not serve within 60 s")
            time.sleep(0.05)
        yield address
    finally:
        if site.poll() is None:
            site.terminate()
            try:
                site.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                site.kill()
                site.wait(10)


@dataclass
class _Run:
    """One hybrid run's results file, wall time, and why it stopped early ("" if it did not)."""

    stored: dict[str, Any]
    wall_s: float
    stopped: str = ""
    restart: dict[str, Any] = field(default_factory=dict)


def _hybrid(case: Case, duration: float, out: Path, left: str, kill: int | None = None) -> tuple[_Run, Any]:
    """One hybrid run, starting the right pier's OpenSees process; ``kill``: at that step SIGKILL it, start it
    again at the same port and resume the run from its last checkpoint.  Returns the run and the experiment."""
    from hybridsim.coordinator.experiment import parse_experiment
    from hybridsim.coordinator.recorder import read_checkpoint, read_results
    from hybridsim.coordinator.simulation import resume_run, run_experiment

    port = free_port()
    stopped, restart = "", {}
    with adapter_peer(port) as peer:
        experiment = parse_experiment(hybrid_table(case, duration, f"127.0.0.1:{port}", out, left), base_dir=FOLDER)

        def killer(n: int, _arrays: object) -> None:
            if n == kill:
                os.kill(peer.pid, signal.SIGKILL)
                peer.wait()

        start = time.perf_counter()
        try:
            run_experiment(experiment, output=out, overwrite=True, listeners=[killer] if kill else [])
        except RunStopped as exc:  # e.g. lagging actuators driving the response unstable: keep the steps done
            stopped = str(exc)
        if not stopped:
            ended_on_die(peer, "the right pier")
    if kill is not None:
        if not stopped:
            raise RunStopped(f"the run went on after the right pier's process was killed at step {kill}")
        restart = {"killed_at_step": kill, "stopped": stopped, "rows_kept": int(read_results(out)["attrs"]["completed_steps"]),
                   "resumed_from_step": read_checkpoint(out).step}  # type: ignore[union-attr]
        with adapter_peer(port) as peer:  # the right pier's program started again at the same address
            resume_run(out)
            ended_on_die(peer, "the restarted right pier")
        stopped = ""
    return _Run(read_results(out), time.perf_counter() - start, stopped, restart), experiment


def monolithic(case: Case, experiment: Any, implicit: bool) -> np.ndarray:
    """The whole bridge in one OpenSees model: AlphaOS (``Linear -initial``) or HHT with Newton iterations."""
    from hybridsim.modules.opensees.monolithic import alpha_os_response

    return alpha_os_response(MODEL, {"part": "whole", "law": case.law}, dt=case.dt,
                             ground_acceleration=experiment.motion.acceleration, alpha=ALPHA, record=RECORD,
                             rayleigh=(DAMPING, 0.0), implicit=implicit)


def run_case(case: Case, duration: float) -> Outcome:
    """Run the hybrid (starting the right pier's OpenSees process, and the left pier's site daemon for a case
    with ``left = "port"``) and the monolithic model."""
    check_duration(duration, RECORD_FILE)
    name = case.key.replace("/", "_")
    with tempfile.TemporaryDirectory(prefix="bridge-") as scratch, contextlib.ExitStack() as stack:
        folder = Path(scratch)
        left = "local" if case.left == "local" else stack.enter_context(site_daemon(case, folder))
        uninterrupted = None
        if case.restart:
            uninterrupted = _hybrid(case, duration, folder / f"{name}-uninterrupted.h5", left)[0].stored["displacement"]
        steps = round(duration / case.dt)
        run, experiment = _hybrid(case, duration, folder / f"{name}.h5", left,
                                  round(KILLED_AT * steps) + 37 if case.restart else None)
    hybrid = run.stored["displacement"]
    forces = committed_forces(run.stored)
    alpha_os = monolithic(case, experiment, implicit=False)
    converged = monolithic(case, experiment, implicit=True) if case.law != "elastic" else alpha_os
    rows = hybrid.shape[0]
    return Outcome(case, duration, hybrid, converged[:rows], run.stored["restoring_force"], run.wall_s, alpha_os[:rows],
                   run.stopped, forces, module_forces(case.law, case.dt, converged[:rows]), uninterrupted, run.restart)
