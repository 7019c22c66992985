"""Long runs at constant cost: the figures of `hybridsim bench`'s ``long_run`` and of benchmarks/long_run.py.

A 1-DOF structure (1000 kg, 4e5 N/m, 3.2 Hz) is shaken by El Centro repeated a multiple of ten times, so that
every tenth of the run is the same phase of the same record; each integrator drives each module kind
(``linear``, a bilinear ``spring``, an ``opensees`` Steel01 spring: path-dependent, and an
``experimental`` site whose virtual lab (a plant: an ideal actuator on the bilinear spring) is in
the site's process, or, as daemons, the site a local daemon that starts its plant as a daemon of its
own) in the coordinator's process and as a local daemon, and the run reports:

- ``steps_per_s``: over the first and the last tenth, and their ratio (1: constant cost);
- ``cpu_us_per_step``: CPU time (user + system, every thread) per step of the coordinator and of each
  daemon over the first and the last tenth, and their ratio: on a shared machine the wall clock's
  ratio measures the other users' load as much as our cost, a process's CPU time far less;
- ``rss_mb``: resident memory of the coordinator and of each daemon at 10 %, 50 % and 100 %, and
  the growth per 100,000 steps over the second half (after the warm-up: the window filled, the
  caches grown) of every process that lived through that half (an OpenSees worker under an iterating
  scheme is replaced by its snapshot at every discard: its growth is NaN); ``daemons (PSS)``: the
  proportional set size of all the run's other processes together (forked copies share their pages:
  PSS counts a shared page once), whatever replaced what;
- ``checkpoint_bytes``: the modules' checkpoints of the last two checkpoints (every tenth);

and a real-time run at 1024 Hz of two daemons (a linear and a spring module) gives the late
percentage, the worst lateness, the step-time quantiles and the causes of the late episodes
(:mod:`hybridsim.coordinator.lateness`).  benchmarks/long_run.py adds the long demonstrations: the
yielding spring under ``newmark`` for about 500,000 steps (:func:`newmark_yielding`) and the maRTHS
main job with its site and plant as daemons under ``newmark`` (:func:`marths_daemons_newmark`).
"""

from __future__ import annotations

import ctypes
import math
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.opensees.forked import end_parked

DATA = Path(__file__).resolve().parent / "data" / "marths" / "ground_motion_elcentro.csv"
RECORD_S = 41.18
"""the length of the El Centro record (s)"""
MASS, STIFFNESS = 1000.0, 4.0e5
YIELDING = {"law": "bilinear", "stiffness": STIFFNESS, "yield_displacement": 0.004, "hardening_ratio": 0.05}
INTEGRATORS = ("alpha-os", "newmark", "central-difference")
KINDS = ("linear", "spring", "opensees", "experimental")
STEEL01_MODEL = '''
def build(ops, fy=1600.0, e0=4.0e5, b=0.05):
    """node 1 fixed, node 2 free: one Steel01 spring (fy N, e0 N/m, hardening ratio b)."""
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(1, 0.0)
    ops.node(2, 0.0)
    ops.fix(1, 1)
    ops.uniaxialMaterial("Steel01", 1, fy, e0, b)
    ops.element("zeroLength", 1, 1, 2, "-mat", 1, "-dir", 1)
'''


def _proc_number(path: str, key: str) -> int | None:
    """The number after ``key`` on its line of a /proc file (kB for memory), or None when the process (or
    the line) is gone."""
    try:
        with open(path) as lines:
            return next((int(line.split()[1]) for line in lines if line.startswith(key)), None)
    except OSError:
        return None


def rss_mb(pid: int | None = None) -> float:
    """Resident memory of a process (MB; this one by default); NaN once it has ended (an OpenSees worker
    hands over to its snapshot at a discard)."""
    kb = _proc_number(f"/proc/{pid or 'self'}/status", "VmRSS:")
    return float("nan") if kb is None else kb / 1024.0


def pss_mb(pids: list[int]) -> float:
    """Proportional set size of processes together (MB): each page shared by k processes counts 1/k."""
    return sum(_proc_number(f"/proc/{pid}/smaps_rollup", "Pss:") or 0 for pid in pids) / 1024.0


_LIBC = ctypes.CDLL(None, use_errno=True)


def cpu_s(pid: int | None = None) -> float:
    """CPU time (user + system, all its threads, those ended included) of a process so far (s; this one
    by default); NaN once it has ended. The process CPU clock (clock_getcpuclockid): nanoseconds, not
    /proc's 10 ms ticks."""
    if pid is None:
        return time.process_time()
    clock = ctypes.c_int()
    if _LIBC.clock_getcpuclockid(pid, ctypes.byref(clock)):
        return float("nan")
    try:
        return time.clock_gettime(clock.value)
    except OSError:  # it ended in between
        return float("nan")


def preemptions(pid: int | None = None) -> int:
    """Involuntary context switches of a process's live threads so far (the scheduler gave their CPU to
    another process before they blocked); 0 once it has ended."""
    folder = f"/proc/{pid or 'self'}/task"
    try:
        tasks = os.listdir(folder)
    except OSError:
        return 0
    return sum(_proc_number(f"{folder}/{task}/status", "nonvoluntary_ctxt_switches") or 0 for task in tasks)


def processes() -> dict[str, int]:
    """This process's descendants by role: ``writer`` (the results writer, a child of multiprocessing's fork
    server), and ``daemon 1``, ``daemon 2``, ... in the order parents first (the local daemons a run started
    and theirs: a site's plant daemon, an OpenSees module's worker family); multiprocessing's fork server and
    resource tracker, which outlive the runs of one process and do no work of theirs, are left out."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    ordered, level = [], [os.getpid()]
    while level:
        level = sorted(pid for pid, parent in parents.items() if parent in level)
        ordered += level
    out: dict[str, int] = {}
    for pid in ordered:
        try:
            with open(f"/proc/{pid}/cmdline") as cmdline:
                command = cmdline.read()
        except OSError:
            continue
        if "multiprocessing.resource_tracker" in command:
            continue
        if "multiprocessing.forkserver" in command:
            if parents[pid] != os.getpid():
                out["writer"] = pid
            continue
        out[f"daemon {sum(key.startswith('daemon') for key in out) + 1}"] = pid
    return out


def repeated_record(folder: Path, seconds: float, repeats: int) -> Path:
    """The first ``seconds`` of El Centro, ``repeats`` times over, as a CSV ground motion in ``folder``."""
    record = np.loadtxt(DATA, delimiter=",", skiprows=1)
    step = record[1, 0] - record[0, 0]
    one = record[record[:, 0] < seconds - 1e-9, 1]
    acceleration = np.tile(one, repeats)
    path = folder / "repeated.csv"
    np.savetxt(path, np.column_stack([np.arange(acceleration.size) * step, acceleration]), delimiter=",",
               header="time_s,accel_m_s2", comments="")
    return path


def _module(kind: str, folder: Path, daemon: bool, dt: float) -> dict[str, Any]:
    if kind == "linear":
        module: dict[str, Any] = {"kind": "linear", "config": {"dofs": ["x"], "stiffness": [[STIFFNESS]]}}
    elif kind == "spring":
        module = {"kind": "spring", "config": {"dofs": ["x"], **YIELDING}}
    elif kind == "experimental":
        plant = {"dt": dt, "dofs": ["x"], "actuators": [{"model": "ideal"}], "specimen": {"kind": "spring", **YIELDING}}
        module = {"kind": "experimental", "config": {
            "dt": dt, "setup": {"kind": "none", "dofs": ["x"]}, "actuators": [{}],
            "initial_stiffness": [[STIFFNESS]],  # a plant daemon cannot be probed before the test
            "backend": {"daemon": plant} if daemon else {"plant": plant}}}
    else:
        (folder / "steel01.py").write_text(STEEL01_MODEL)
        module = {"kind": "opensees", "config": {"model": "steel01.py", "control": [{"name": "x", "node": 2, "dof": 1}]}}
    # a site daemon with a plant daemon starts that daemon in its open: as examples/marths.toml, 30 s for it
    deadline = {"deadline_s": 30.0} if kind == "experimental" else {}
    return {"name": kind, **module, **({"address": "local", **deadline} if daemon else {})}


class _Probe:
    """A step listener that notes, at every tenth, the wall clock, the load average and each process's
    preemptions, and the memory at 10 %, 50 % and 100 %; and each process's CPU time every 1/16 of a tenth
    (a window)."""

    WINDOWS = 16
    """windows per tenth"""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.marks = {max(round(steps * k / 10), 1): k for k in range(11)}  # listeners start at step 1
        self.window = max(steps // (10 * self.WINDOWS), 1)
        self.clock: dict[int, float] = {}
        self.load: dict[int, float] = {}
        self.procs: dict[str, int] = {}
        """the run's other processes by role (:func:`processes`)"""
        self.cpu: dict[int, dict[str, tuple[int | None, float]]] = {}
        """step -> process -> (ID, CPU time s) at every window's end and at every tenth"""
        self.preempted: dict[int, dict[str, tuple[int | None, int]]] = {}
        self.rss: dict[str, dict[str, float]] = {}
        self.rss_pids: dict[str, dict[str, int | None]] = {}

    def figures(self) -> dict[str, Any]:
        """steps, steps/s over the first and last tenth, CPU time per step, RSS at 10/50/100 % and its growth
        per 100k steps over the second half."""
        marks = {k: n for n, k in self.marks.items()}
        first = (marks[1] - marks[0]) / (self.clock[1] - self.clock[0])
        last = (marks[10] - marks[9]) / (self.clock[10] - self.clock[9])
        same = self.rss_pids["50%"]
        growth = {who: (self.rss["100%"][who] - mb) * 1e5 / (marks[10] - marks[5])
                  if self.rss_pids["100%"].get(who) == same[who] else float("nan")
                  for who, mb in self.rss["50%"].items() if who in self.rss["100%"]}
        return {"steps": self.steps, "steps_per_s": {"first_tenth": first, "last_tenth": last,
                                                     "last_over_first": last / first},
                "cpu_us_per_step": self._cpu_per_step(marks),
                "load_average": [self.load[k] for k in range(11)],
                "rss_mb": self.rss, "rss_growth_mb_per_100k_steps": growth}

    def _cpu_per_step(self, marks: Mapping[int, int]) -> dict[str, dict[str, Any]]:
        """Per process (the ones that lived through the run: the same ID at both ends) and tenth: CPU time per
        step (us) over the tenth (``tenths``), and the lower quartile over its windows (``quiet``: a step's
        cost when the machine disturbed it least; other processes taking the CPU make a step cost more CPU
        time, cache refills, preemptions, never less); first, last and their ratios; and the preemptions
        (involuntary context switches: another process was given the CPU) per 1000 steps."""
        def per_step(a: int, b: int) -> dict[str, float]:
            x, y = self.cpu[a], self.cpu[b]
            return {who: (y[who][1] - x[who][1]) * 1e6 / (b - a) for who in x if who in y and x[who][0] == y[who][0]}
        steps = sorted(self.cpu)
        tenths, quiet = [], []
        for k in range(1, 11):
            tenths.append(per_step(marks[k - 1], marks[k]))
            inside = [n for n in steps if marks[k - 1] <= n <= marks[k]]
            windows = [per_step(a, b) for a, b in zip(inside, inside[1:])]
            quiet.append({who: float(np.nanpercentile([w.get(who, np.nan) for w in windows], 25))
                          for who in tenths[-1]})
        out = {}
        for who in tenths[0]:
            if not all(who in t for t in tenths):
                continue
            mean, low = [t[who] for t in tenths], [q[who] for q in quiet]
            x, y = self.preempted[marks[0]], self.preempted[marks[10]]
            out[who] = {"first_tenth": mean[0], "last_tenth": mean[9], "last_over_first": _ratio(mean[9], mean[0]),
                        "quiet_first": low[0], "quiet_last": low[9], "quiet_last_over_first": _ratio(low[9], low[0]),
                        "tenths": mean, "quiet_tenths": low,
                        "preempted_per_1000_steps": [
                            (self.preempted[marks[k]][who][1] - self.preempted[marks[k - 1]][who][1]) * 1e3
                            / (marks[k] - marks[k - 1]) for k in range(1, 11)] if who in x and who in y else None}
        return out

    def __call__(self, n: int, _window: Mapping[str, Any]) -> None:
        tenth = self.marks.get(n)
        if tenth is not None:
            self.clock[tenth] = time.perf_counter()
            self.load[tenth] = os.getloadavg()[0]
            self.procs = processes()
            self.preempted[n] = {"coordinator": (None, preemptions()),
                                 **{who: (pid, preemptions(pid)) for who, pid in self.procs.items()}}
            if tenth in (1, 5, 10):
                at = f"{10 * tenth}%"
                self.rss[at] = {"coordinator": rss_mb(), **{who: rss_mb(pid) for who, pid in self.procs.items()}}
                self.rss_pids[at] = {"coordinator": None, **self.procs}
                daemons = [pid for who, pid in self.procs.items() if who.startswith("daemon")]
                if daemons:
                    self.rss[at]["daemons (PSS)"] = pss_mb(daemons)
                    self.rss_pids[at]["daemons (PSS)"] = None
        if tenth is not None or n % self.window == 0:
            self.cpu[n] = {"coordinator": (None, cpu_s()),
                           **{who: (pid, cpu_s(pid)) for who, pid in self.procs.items()}}


def _ratio(last: float, first: float) -> float:
    return last / first if first > 0 else float("nan")


def long_run(integrator: str, kind: str, daemon: bool, seconds: float = 8.0, dt: float = 0.01,
             repeats: int = 10) -> dict[str, Any]:
    """One integrator x module kind x placement over the record repeated ``repeats`` times (a multiple of
    ten: every tenth is then the same phase; see the module docstring); a checkpoint every repetition."""
    with tempfile.TemporaryDirectory(prefix="hybridsim-longrun-") as name:
        folder = Path(name)
        motion = repeated_record(folder, seconds, repeats)
        table = {
            "experiment": {"name": f"long_{integrator}_{kind}", "dt": dt},
            "structure": {"dofs": ["x"], "mass_diagonal": [MASS], "influence": [1.0],
                          "damping": {"rayleigh": [0.3, 1e-4]}},
            "ground_motion": {"file": str(motion), "scale": 0.6},
            "integrator": {"kind": integrator},
            "modules": [_module(kind, folder, daemon, dt)],
            "output": {"file": str(folder / "long.h5"), "checkpoint_every": int(round(seconds / dt))},
        }
        experiment = parse_experiment(table, base_dir=folder)
        probe = _Probe(experiment.steps)
        try:
            summary = run_experiment(experiment, listeners=[probe]).summary
        finally:  # an in-process OpenSees module's family stays parked with its kept copies: not the next run's
            end_parked()
        with h5py.File(folder / "long.h5", "r") as f:
            sizes = sorted(int(f[f"checkpoint/{slot}/modules/{kind}"].shape[0]) for slot in ("slot0", "slot1"))
    return {"integrator": integrator, "kind": kind, "where": "daemon" if daemon else "in process",
            **probe.figures(), "checkpoint_bytes": {"90%": sizes[0], "100%": sizes[1]},
            "summary_steps_per_s": summary["steps_per_second"]}


def newmark_yielding(repeats: int = 120, daemon: bool = False) -> dict[str, Any]:
    """The yielding spring under ``newmark`` over the whole El Centro record ``repeats`` times (120: 494,160
    steps at dt = 0.01 s, a permanent offset at rest between the repetitions): the run must not stop."""
    return long_run("newmark", "spring", daemon, RECORD_S, repeats=repeats)


def marths_daemons_newmark(duration: float | None = None) -> dict[str, Any]:
    """The maRTHS main job (examples/marths.toml: the site and its plant local daemons) under ``newmark``, the
    first ``duration`` s of the record (all of it by default): steps/s, memory, the maRTHS criteria."""
    from dataclasses import replace

    from hybridsim import examples
    from hybridsim.coordinator.experiment import load_experiment

    experiment = load_experiment(Path(examples.__file__).parent / "marths.toml")
    motion = experiment.motion
    if duration is not None:
        motion = replace(motion, acceleration=motion.acceleration[: round(duration / experiment.dt) + 1])
    with tempfile.TemporaryDirectory(prefix="hybridsim-longrun-") as name:
        experiment = replace(experiment, integrator="newmark", integrator_options={}, motion=motion,
                             output=Path(name) / "marths_newmark.h5")
        probe = _Probe(experiment.steps)
        summary = run_experiment(experiment, listeners=[probe]).summary
    return {**probe.figures(), "summary_steps_per_s": summary["steps_per_second"], "wall_s": summary["wall_s"],
            "module_evaluations": summary["module_evaluations"],
            "J": summary.get("evaluation", {}).get("J"), "trials": summary["modules"]}


def realtime_two_daemons(duration: float = 20.0) -> dict[str, Any]:
    """A linear and a spring daemon, one DOF each, paced at 1024 Hz: late %, worst lateness, step times."""
    with tempfile.TemporaryDirectory(prefix="hybridsim-longrun-") as name:
        folder = Path(name)
        motion = repeated_record(folder, RECORD_S, math.ceil(duration / RECORD_S))
        table = {
            "experiment": {"name": "realtime_two_daemons", "dt": 1.0 / 1024, "duration": duration},
            "structure": {"dofs": ["x1", "x2"], "mass_diagonal": [MASS, MASS], "influence": [1.0, 1.0],
                          "damping": {"rayleigh": [0.3, 1e-4]}},
            "ground_motion": {"file": str(motion), "scale": 0.6},
            "integrator": {"kind": "alpha-os"},
            "modules": [{"name": "linear", "kind": "linear", "address": "local",
                         "config": {"dofs": ["x1"], "stiffness": [[STIFFNESS]]}},
                        {"name": "spring", "kind": "spring", "address": "local",
                         "config": {"dofs": ["x2"], **YIELDING}}],
            "output": {"file": str(folder / "realtime.h5")},
        }
        summary = run_experiment(parse_experiment(table, base_dir=folder), realtime=True).summary
    return {"steps": summary["steps"], "late_steps": summary["late_steps"], "late_steps_pct": summary["late_steps_pct"],
            "max_lateness_us": summary["max_lateness_us"], "step_time_us": summary["step_time_us"],
            "compute_time_us": summary["compute_time_us"], "late_causes": summary.get("late_causes")}


def long_run_figures(seconds: float = 8.0, realtime_s: float = 20.0, in_process_repeats: int = 10,
                     daemon_repeats: int = 10) -> dict[str, Any]:
    """Every integrator x module kind x placement (:func:`matrix`), and the real-time run."""
    return {"runs": matrix(seconds, in_process_repeats, daemon_repeats),
            "realtime_two_daemons": realtime_two_daemons(realtime_s)}


def matrix(seconds: float = 8.0, in_process_repeats: int = 10, daemon_repeats: int = 10) -> list[dict[str, Any]]:
    """Every integrator x module kind x placement, ``seconds`` of record per repetition, repeated
    ``in_process_repeats`` times in the coordinator's process and ``daemon_repeats`` times as a daemon
    (multiples of ten; a module in process runs 3-10 times faster: more repetitions make its tenths last
    long enough to time on a shared machine)."""
    return [long_run(integrator, kind, daemon, seconds, repeats=daemon_repeats if daemon else in_process_repeats)
            for integrator in INTEGRATORS for kind in KINDS for daemon in (False, True)]


def format_long_run(figures: Mapping[str, Any]) -> str:
    """The table of :func:`long_run_figures`."""
    lines = [f"{'integrator':<19}{'kind':<13}{'where':<11}{'steps':>7}{'steps/s first':>14}{'last':>8}{'ratio':>7}"
             f"{'RSS MB coord 10/50/100 %':>26}{'daemon 1 10/50/100 %':>23}{'MB/100k c, d (PSS d), w':>44}{'ckpt B 90/100 %':>17}"
             f"  CPU us/step first/last tenth (ratio; ratio of the quietest quarter): coordinator; daemons; writer  [load average]"]
    for r in figures["runs"]:
        rss, s = r["rss_mb"], r["steps_per_s"]
        coord = "/".join(f"{rss[p]['coordinator']:.1f}" for p in ("10%", "50%", "100%"))
        daemon = "/".join(f"{rss[p].get('daemon 1', float('nan')):.1f}" for p in ("10%", "50%", "100%"))
        grow = _growth(r["rss_growth_mb_per_100k_steps"])
        ckpt = f"{r['checkpoint_bytes']['90%']}/{r['checkpoint_bytes']['100%']}"
        lines.append(f"{r['integrator']:<19}{r['kind']:<13}{r['where']:<11}{r['steps']:>7}{s['first_tenth']:>14.0f}"
                     f"{s['last_tenth']:>8.0f}{s['last_over_first']:>7.2f}{coord:>26}{daemon:>23}{grow:>44}{ckpt:>17}"
                     f"  {_cpu(r)}")
    if figures.get("realtime_two_daemons"):
        lines += _realtime_lines(figures["realtime_two_daemons"])
    for key, label in (("newmark_yielding", "newmark, yielding spring"), ("marths_newmark", "maRTHS daemons, newmark")):
        if key in figures:
            r, s = figures[key], figures[key]["steps_per_s"]
            lines.append(f"{label}: {r['steps']} steps, no stop; steps/s first tenth {s['first_tenth']:.0f}, last "
                         f"{s['last_tenth']:.0f} ({s['last_over_first']:.2f}); MB/100k steps {_growth(r['rss_growth_mb_per_100k_steps'])}"
                         + f"; CPU us/step {_cpu(r)}"
                         + (f"; {r['module_evaluations']['per_step']:.2f} module evaluations per step (most "
                            f"{r['module_evaluations']['max_in_a_step']}), wall {r['wall_s']:.0f} s"
                            if "module_evaluations" in r else "")
                         + (f"; J2 {r['J']['J2'][0]:.2f}/{r['J']['J2'][1]:.2f} %, J7 {r['J']['J7'][0]:.2f}/"
                            f"{r['J']['J7'][1]:.2f} %" if r.get("J") else ""))
    return "\n".join(lines)


def _realtime_lines(rt: Mapping[str, Any]) -> list[str]:
    """The real-time run's late steps and the causes of its late episodes."""
    lines = [f"real time at 1024 Hz, two daemons (linear + spring), {rt['steps']} steps: {rt['late_steps']} late "
             f"({rt['late_steps_pct']:.2f} %), worst {rt['max_lateness_us']:.0f} us late; step p50 "
             f"{rt['step_time_us']['p50']:.0f} us, p99 {rt['step_time_us']['p99']:.0f} us, "
             f"max {rt['step_time_us']['max']:.0f} us"]
    causes = rt.get("late_causes")
    if causes:
        lines.append("  late episodes by cause: " + ", ".join(f"{k} {v}" for k, v in causes["episodes"].items())
                     + f"; per 1000 steps: {causes['rate_during_writes']:.0f} during results writes "
                     f"({causes['episodes_during_writes']} in {causes['steps_during_writes']} steps), "
                     f"{causes['rate_outside_writes']:.0f} outside; {causes['gc_collections']} collections; writer "
                     f"busy {causes['writer_busy_pct']:.2f} %, the loop waited for it {causes['loop_writer_waits']} "
                     f"times, it hurried {causes['writer_hurried']} times, wrote beside the loop "
                     f"{causes['writer_behind']} times")
    return lines


def _growth(growth: Mapping[str, float]) -> str:
    """RSS growth per 100k steps: the coordinator's, then each daemon's (/-separated; - without daemons), the
    PSS of all of them together, and the results writer's."""
    daemons = "/".join(f"{v:.2f}" for k, v in growth.items() if k.startswith("daemon ")) or "-"
    pss = f" ({growth['daemons (PSS)']:.2f})" if "daemons (PSS)" in growth else ""
    writer = f", w {growth['writer']:.2f}" if "writer" in growth else ""
    return f"{growth['coordinator']:.2f}, {daemons}{pss}{writer}"


def _cpu(run: Mapping[str, Any]) -> str:
    """CPU time per step over the first and last tenth: the coordinator's, then each daemon's; the load average
    over the first and the last tenth."""
    cpu, load = run.get("cpu_us_per_step", {}), run.get("load_average")

    def one(who: str) -> str:
        c = cpu[who]
        ratios = f"{c['last_over_first']:.2f}; {c['quiet_last_over_first']:.2f}"
        return f"{c['first_tenth']:.0f}/{c['last_tenth']:.0f} ({ratios})"
    daemons = ", ".join(one(k) for k in cpu if k.startswith("daemon")) or "-"
    daemons += f"; writer {one('writer')}" if "writer" in cpu else ""
    loads = f"  [load {(load[0] + load[1]) / 2:.1f}/{(load[9] + load[10]) / 2:.1f}]" if load else ""
    return (f"{one('coordinator')}; {daemons}" if "coordinator" in cpu else "-") + loads
