"""`hybridsim bench`'s ``large_model``: the coordinator's in-process step over a plane frame of 1k to 100k DOFs.

The frame is :mod:`hybridsim.modules.opensees.models.frame2d` (``lines`` column lines of 6 m bays by
``stories`` stories of 3.5 m, one elastic beam-column a member, 3 DOFs a joint): :data:`SIZES` gives
1,026 / 2,028 / 3,996 / 10,092 / 27,075 / 99,918 DOFs.  It is split at its middle story into two in-process
``linear`` modules (sparse K over the DOFs each touches), the structure's lumped M and Rayleigh C = a M + b K
(:data:`hybridsim.coordinator.large_frame.RAYLEIGH`) are sparse, K_I is the assembled K (what the pre-test
measures of a linear module, to round-off), and a step is what the run's loop does for it: predict, both
modules' restoring forces, correct, commit (the results file and the pre-test are left out; the 60 s
real-time run of ``benchmarks/large_model_realtime.py`` has them).  Each case runs in a child process pinned to
one core with one BLAS thread and a memory limit; a case that cannot be built within the limit or the time
says so.  Figures per case: build and factor time (s), mean and p99 step (us) free-running, and the % of
late steps paced at 1024 Hz (a step is late when it ends after its slot, as :class:`~hybridsim.coordinator.
pacing.Pacer` counts).  ``crossover`` runs alpha-OS over the same frames dense and sparse at small sizes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from hybridsim.coordinator.large_frame import DT, RAYLEIGH, SCHEMES, ground
from hybridsim.modules.opensees.models.frame2d import Frame, matrices

SIZES = ((18, 19), (26, 26), (36, 37), (58, 58), (95, 95), (183, 182))
"""(column lines, stories): 1,026, 2,028, 3,996, 10,092, 27,075 and 99,918 DOFs (2,028: between the 1,026 that
held 1024 Hz and the 3,996 that did not, measured)"""
CROSSOVER = ((2, 5), (4, 8), (8, 12), (18, 19), (26, 26))
"""dense against sparse alpha-OS: 30, 96, 288, 1,026 and 2,028 DOFs"""
LATE_PCT = 1.0
"""a size holds 1024 Hz with fewer late steps than this (%)"""
MEMORY_BYTES = 6 << 30
"""a case's address-space limit"""


def coordinator(frame: Frame, scheme: str, sparse: bool = True) -> tuple[Any, Any, np.ndarray]:
    """The frame's partition (two in-process linear modules, split at the middle story), the scheme's integrator
    over M, C, K_I started at rest, and the load shape -M r (r: 1 at every x DOF)."""
    from hybridsim.coordinator.integrators import integrator_class
    from hybridsim.coordinator.partition import ModuleSlot, Partition
    from hybridsim.modules.linear import LinearModule
    from hybridsim.wire.contract import Dof, Session

    stiffness, mass = matrices(frame)
    names = frame.dof_names()
    slots = []
    for part in ("lower", "upper"):
        k = matrices(frame, part, frame.stories // 2)[0]
        touched = np.flatnonzero(k.getnnz(axis=1))
        block = k[touched][:, touched]
        module = LinearModule([Dof(names[i], "rotation" if names[i].endswith("r") else "translation")
                               for i in touched], block if sparse else block.toarray())
        module.open(Session(DT, module.describe().dof_names, run_id="large_model"))
        slots.append(ModuleSlot(part, module, module.describe(), touched, "in process"))
    damping = RAYLEIGH[0] * mass + RAYLEIGH[1] * stiffness
    if not sparse:
        mass, damping, stiffness = mass.toarray(), damping.toarray(), stiffness.toarray()
    integrator = integrator_class(scheme)(mass, damping, stiffness, DT, **SCHEMES[scheme][0])
    zeros = np.zeros(frame.ndof)
    integrator.start(zeros, zeros, zeros, zeros)
    influence = np.zeros(frame.ndof)
    influence[0::3] = 1.0
    return Partition(frame.ndof, slots), integrator, -(mass @ influence)


def step_times(built: tuple[Any, Any, np.ndarray], record: np.ndarray, first: int, steps: int, budget_s: float,
               paced: bool) -> tuple[np.ndarray, int]:
    """Wall time (s) of steps first.. of ``built`` (:func:`coordinator`) under ``record`` (m/s^2 a step;
    ``steps`` of them, fewer if ``budget_s`` runs out, at least 20) and how many were late; ``paced``: each
    issued in its 1024 Hz slot (free-running: none is counted late)."""
    from hybridsim.coordinator.pacing import Pacer, realtime_process

    partition, integrator, shape = built
    load, pacer, times = np.empty(shape.size), Pacer(DT), []
    with realtime_process():
        end = time.perf_counter() + budget_s
        for n in range(first, first + steps):
            begin = pacer.wait() if paced else time.perf_counter()
            trial = integrator.predict(np.multiply(shape, record[n], out=load))
            integrator.correct(partition.restoring_force(n, n * DT, trial))
            partition.commit(n)
            finished = time.perf_counter()
            if paced:
                pacer.done(finished)
            times.append(finished - begin)
            if len(times) >= 20 and finished > end:
                break
    return np.asarray(times), pacer.late


def case(lines: int, stories: int, scheme: str, sparse: bool = True, steps: int = 2048,
         budget_s: float = 10.0) -> dict[str, Any]:
    """One size under one scheme: assembly and set-up time (s: modules, M, C, the factor), mean and p99 step
    (us) over ``steps`` free-running from rest, then, when the mean fits in a 1024 Hz slot, the % of late steps
    over ``steps`` more paced at 1024 Hz."""
    frame = Frame(lines, stories)
    begin = time.perf_counter()
    matrices(frame)
    build_s = time.perf_counter() - begin
    begin = time.perf_counter()
    built = coordinator(frame, scheme, sparse)
    setup_s = time.perf_counter() - begin
    record = ground(2 * steps + 1)
    free, _ = step_times(built, record, 1, steps, budget_s, paced=False)
    out = {"ndof": frame.ndof, "mesh": f"{lines} x {stories}", "scheme": scheme, "sparse": sparse,
           "build_s": build_s, "setup_s": setup_s, "steps": int(free.size),
           "mean_us": 1e6 * float(free.mean()), "p99_us": 1e6 * float(np.percentile(free, 99))}
    if out["mean_us"] < 1e6 * DT:
        paced, late = step_times(built, record, free.size + 1, steps, 2.0 * steps * DT, paced=True)
        out["late_pct"] = 100.0 * late / paced.size
    built[0].close()
    return out


def in_child(arguments: dict[str, Any], timeout_s: float, memory: int = MEMORY_BYTES) -> dict[str, Any]:
    """:func:`case` in a child process on one core (the last this process may use) with one BLAS thread and
    ``memory`` bytes of address space; what stops it (time, memory, an error) is the answer's ``error``."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    core = max(os.sched_getaffinity(0))
    code = (f"import os, resource, json, sys; os.sched_setaffinity(0, {{{core}}}); "
            f"resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory})); "
            "from hybridsim.coordinator.bench_large import case; "
            "print(json.dumps(case(**json.loads(sys.argv[1]))))")
    label = f"{arguments['lines']} x {arguments['stories']} frame"
    try:
        done = subprocess.run([sys.executable, "-c", code, json.dumps(arguments)], capture_output=True, text=True,
                              env=env, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return {**arguments, "error": f"{label}: not done within {timeout_s:g} s"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        if "MemoryError" in last or "std::bad_alloc" in last or "memory" in last.lower():
            last = f"does not fit in {memory / 2 ** 30:g} GiB ({last})"
        return {**arguments, "error": f"{label}: {last}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def large_model(sizes: tuple[tuple[int, int], ...] = SIZES, crossover: tuple[tuple[int, int], ...] = CROSSOVER,
                steps: int = 2048, budget_s: float = 10.0, timeout_s: float = 300.0) -> dict[str, Any]:
    """The ``large_model`` figures: every size under alpha-OS and KR-alpha (sparse), the largest that holds
    1024 Hz with under :data:`LATE_PCT` % late steps under each, and the dense/sparse crossover of alpha-OS."""
    table = [in_child({"lines": lines, "stories": stories, "scheme": scheme, "steps": steps,
                       "budget_s": budget_s}, timeout_s) for lines, stories in sizes for scheme in SCHEMES]
    pairs = [[in_child({"lines": lines, "stories": stories, "scheme": "alpha-os", "sparse": sparse,
                        "steps": steps, "budget_s": budget_s / 4.0}, timeout_s) for sparse in (False, True)]
             for lines, stories in crossover]
    realtime = {scheme: max((row["ndof"] for row in table if row.get("scheme") == scheme
                             and row.get("late_pct", 100.0) < LATE_PCT), default=0) for scheme in SCHEMES}
    faster = None
    for dense, sparse in reversed(pairs):  # the smallest size from which every larger one is faster sparse
        if "error" in dense or "error" in sparse or sparse["mean_us"] >= dense["mean_us"]:
            break
        faster = dense["ndof"]
    return {"rate_hz": 1.0 / DT, "late_limit_pct": LATE_PCT, "table": table, "largest_realtime_ndof": realtime,
            "crossover": {"pairs": pairs, "sparse_faster_from_ndof": faster}}


def format_large_model(figures: dict[str, Any]) -> list[str]:
    """The table of :func:`large_model` in lines: one a case, then the largest real-time sizes and the crossover."""
    lines = ["large model (plane frame, in process, one core; step = predict, 2 linear modules, correct, commit):",
             f"{'DOFs':>8}{'mesh':>11}{'scheme':>16}{'set-up s':>10}{'mean us':>10}{'p99 us':>10}{'late %':>8}"]
    rows = figures["table"] + [row for pair in figures["crossover"]["pairs"] for row in pair]
    for row in rows:
        if "error" in row:
            lines.append(f"{'':>19}{row['scheme']:>16}  {row['error']}")
            continue
        scheme = row["scheme"] + ("" if row["sparse"] else " dense")
        late = f"{row['late_pct']:.2f}" if "late_pct" in row else "-"
        lines.append(f"{row['ndof']:>8}{row['mesh']:>11}{scheme:>16}{row['setup_s']:>10.2f}{row['mean_us']:>10.0f}"
                     f"{row['p99_us']:>10.0f}{late:>8}")
    largest = ", ".join(f"{scheme} {n} DOFs" for scheme, n in figures["largest_realtime_ndof"].items())
    lines.append(f"largest frame holding {figures['rate_hz']:.0f} Hz with under {figures['late_limit_pct']:g} % late "
                 f"steps: {largest}; sparse alpha-OS faster than dense from "
                 f"{figures['crossover']['sparse_faster_from_ndof']} DOFs")
    return lines
