"""A path-dependent OpenSees site over long runs: discard cost, native memory, newmark vs alpha-os (issue 17).

    python benchmarks/opensees_long_run.py identity [--steps 2000]
    python benchmarks/opensees_long_run.py discard [--after 100 10000 100000]
    python benchmarks/opensees_long_run.py memory [--steps 100000]
    python benchmarks/opensees_long_run.py ratio [--seconds S]
    python benchmarks/opensees_long_run.py checkpoints [--steps 300000] [--every 4096]

identity  `newmark` over examples/opensees_frame_hybrid_steel01.toml (three OpenSees daemons, the
          portal's Steel01 column yielding) for STEPS steps, compared with the displacements the
          rebuild-and-replay module gave (benchmarks/data/newmark_steel01_frame_first2000.npz, saved from
          main at 1859ed3 before the worker process): max |d - d_ref| / max |d_ref| per DOF.
discard   the portal site in process: after N committed steps, p50 of one trial that is discarded
          followed by the trial that is committed (what an iteration of newmark costs at that site);
          it must not grow with N.
memory    resident memory of a site process imposing STEPS increments on the 19-DOF `upper` frame (in
          process) and of the portal's worker process over STEPS committed steps: growth per 100,000.
ratio     wall time of `newmark` and `alpha-os` over the first S seconds of the record (default: all),
          steps/s of newmark's first and last tenth.
checkpoints  the Steel01 frame under alpha-os for STEPS steps (El Centro repeated) with a checkpoint
          every EVERY steps: each module's checkpoint size at the first and the last, the run's wall
          time; then a fresh portal site restores the last checkpoint (timed).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import time
import tomllib
from pathlib import Path

import numpy as np

from hybridsim.coordinator.experiment import Experiment, load_experiment
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.opensees import OpenSeesModule
from hybridsim.wire.contract import Command, Session

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
FRAME = EXAMPLES / "opensees_frame_hybrid_steel01.toml"
REFERENCE = Path(__file__).parent / "data" / "newmark_steel01_frame_first2000.npz"


def frame(integrator: str, steps: int | None) -> Experiment:
    """The Steel01 frame under ``integrator`` over its first ``steps`` steps (None: the whole record)."""
    experiment = load_experiment(FRAME)
    options = {"alpha": -0.05} if integrator == "alpha-os" else {}
    experiment = dataclasses.replace(experiment, integrator=integrator, integrator_options=options)
    if steps is not None:
        motion = experiment.motion
        experiment = dataclasses.replace(experiment, motion=dataclasses.replace(
            motion, acceleration=motion.acceleration[:steps + 1]))
    return experiment


def identity(steps: int, folder: Path) -> None:
    reference = np.load(REFERENCE)["displacement"][:steps + 1]
    start = time.perf_counter()
    result = run_experiment(frame("newmark", steps), output=folder / "identity.h5", overwrite=True)
    wall = time.perf_counter() - start
    d = result.displacement
    scale = np.max(np.abs(reference), axis=0)
    relative = np.max(np.abs(d - reference), axis=0) / np.where(scale > 0, scale, 1.0)
    print(f"newmark, Steel01 frame, {steps} steps in {wall:.1f} s: max |d - d_ref| / max |d_ref| over the "
          f"{len(result.dofs)} DOFs = {relative.max():.3g} (worst {result.dofs[int(relative.argmax())]}); "
          f"bit-identical DOFs: {int(np.sum(np.all(d == reference, axis=0)))} of {len(result.dofs)}")


def _portal() -> OpenSeesModule:
    module = OpenSeesModule.from_config(tomllib.loads((EXAMPLES / "opensees_site_bay_steel01.toml").read_text()),
                                        base_dir=EXAMPLES)
    module.open(Session(dt=1 / 1024, dof_names=module.describe().dof_names))
    return module


def _target(k: int, n: int) -> np.ndarray:
    """A drift history that yields the portal's column now and then (m, rad at its 5 control DOFs)."""
    return 0.012 * np.sin(2 * np.pi * k / 700) * np.array([1.0, 0.0, -0.8, 0.0, -0.8]) * (1 + k / max(n, 1))


def discard(after: list[int]) -> None:
    for n in after:
        module = _portal()
        try:
            step = 0
            for k in range(n):                                  # committed steps, no discard: no copies
                module.propose(step, Command(time=step / 1024, displacement=_target(k, n)))
                module.execute(step)
                module.commit(step)
                step += 1
            first = time.perf_counter()
            times = []
            for k in range(n, n + 60):
                base = _target(k, n)
                t0 = time.perf_counter()
                module.propose(step, Command(time=step / 1024, displacement=base * 1.05))
                module.execute(step)                            # a trial, discarded by the next proposal
                module.propose(step + 1, Command(time=step / 1024, displacement=base))
                module.execute(step + 1)
                module.commit(step + 1)
                times.append(time.perf_counter() - t0)
                step += 2
            rebuild = times[0]
            steady = np.array(times[10:]) * 1e3
            print(f"after {n:>7} committed steps: trial + discard + trial + commit p50 {np.median(steady):6.2f} ms, "
                  f"p90 {np.percentile(steady, 90):6.2f} ms (the first, which rebuilt and replayed the {n} steps "
                  f"once: {rebuild:.2f} s); replayed {module.stats['replayed_steps']:.0f}, "
                  f"rebuilds {module.stats['rebuilds']:.0f} (wall {time.perf_counter() - first:.1f} s)")
        finally:
            module.close()


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def memory(steps: int) -> None:
    upper = OpenSeesModule.from_config(tomllib.loads((EXAMPLES / "opensees_site_upper.toml").read_text()),
                                       base_dir=EXAMPLES)
    try:
        rng = np.random.default_rng(1)
        pattern = 1e-4 * rng.standard_normal((64, len(upper.dofs)))
        model = upper._model
        marks = []
        for k in range(steps):
            model.impose(pattern[k % 64], 1)
            if k % (steps // 10) == 0:
                marks.append(_rss(os.getpid()))
        marks.append(_rss(os.getpid()))
        growth = (marks[-1] - marks[2]) / (steps * 0.8) * 1e5 / 1e6
        print(f"upper (19 control DOFs) in process, {steps} increments: RSS {marks[-1] / 1e6:.1f} MB, "
              f"growth after the first fifth {growth:+.3f} MB per 100,000")
    finally:
        upper.close()
    portal = _portal()
    try:
        marks = []
        for k in range(steps):
            portal.propose(k, Command(time=k / 1024, displacement=_target(k, steps)))
            portal.execute(k)
            portal.commit(k)
            if k % (steps // 10) == 0:
                marks.append(_rss(portal._worker._worker_pid))  # type: ignore[union-attr]
        marks.append(_rss(portal._worker._worker_pid))  # type: ignore[union-attr]
        growth = (marks[-1] - marks[2]) / (steps * 0.8) * 1e5 / 1e6
        print(f"portal worker process, {steps} committed steps: RSS {marks[-1] / 1e6:.1f} MB, growth after the "
              f"first fifth {growth:+.3f} MB per 100,000 (the committed path is on disk: "
              f"{portal._committed.rows if portal._committed else 0} rows)")
    finally:
        portal.close()


def ratio(seconds: float | None, folder: Path) -> None:
    dt = load_experiment(FRAME).dt
    steps = None if seconds is None else int(round(seconds / dt))
    walls = {}
    for integrator in ("alpha-os", "newmark"):
        start = time.perf_counter()
        result = run_experiment(frame(integrator, steps), output=folder / f"{integrator}.h5", overwrite=True)
        walls[integrator] = time.perf_counter() - start
        n = len(result.time) - 1
        line = f"{integrator:>8}: {n} steps in {walls[integrator]:.1f} s ({n / walls[integrator]:.1f} steps/s)"
        if integrator == "newmark":
            portal = result.summary["modules"]["portal"]
            line += f", {portal['executed'] / n:.2f} trials per step, portal replayed {portal['replayed_steps']:.0f}"
        print(line)
    print(f"newmark / alpha-os wall time: {walls['newmark'] / walls['alpha-os']:.2f}")


def checkpoints(steps: int, every: int, folder: Path) -> None:
    from hybridsim.coordinator.recorder import Recorder
    experiment = frame("alpha-os", None)
    record = experiment.motion.acceleration
    repeated = np.tile(record, steps // record.size + 1)[:steps + 1]
    experiment = dataclasses.replace(experiment, checkpoint_every=every,
                                     motion=dataclasses.replace(experiment.motion, acceleration=repeated))
    sizes: list[tuple[int, dict[str, int]]] = []
    write = Recorder.checkpoint

    def measured(self, step, step_id, state, modules):  # type: ignore[no-untyped-def]
        sizes.append((step, {name: len(data) for name, data in modules.items()}))
        return write(self, step, step_id, state, modules)

    Recorder.checkpoint = measured  # type: ignore[method-assign]
    output = folder / "checkpoints.h5"
    start = time.perf_counter()
    try:
        run_experiment(experiment, output=output, overwrite=True)
    finally:
        Recorder.checkpoint = write  # type: ignore[method-assign]
    wall = time.perf_counter() - start
    print(f"alpha-os, Steel01 frame, {steps} steps ({steps // record.size + 1} x El Centro), {len(sizes)} "
          f"checkpoints, {wall:.0f} s ({steps / wall:.0f} steps/s)")
    for name in sizes[0][1]:
        print(f"  {name}: checkpoint {sizes[0][1][name]} B at step {sizes[0][0]}, {sizes[-1][1][name]} B at step "
              f"{sizes[-1][0]}")
    import h5py
    with h5py.File(output) as f:
        slot = int(f["checkpoint/current"][0])
        state = bytes(f[f"checkpoint/slot{slot}/modules/portal"][:])
    portal = _portal()
    try:
        t0 = time.perf_counter()
        portal.restore(state)
        print(f"  a fresh portal site restores the last checkpoint in {time.perf_counter() - t0:.2f} s "
              f"(replaying {portal.stats['replayed_steps']:.0f} committed steps)")
    finally:
        portal.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("identity").add_argument("--steps", type=int, default=2000)
    sub.add_parser("discard").add_argument("--after", type=int, nargs="+", default=[100, 10_000, 100_000])
    sub.add_parser("memory").add_argument("--steps", type=int, default=100_000)
    sub.add_parser("ratio").add_argument("--seconds", type=float, default=None)
    parser_checkpoints = sub.add_parser("checkpoints")
    parser_checkpoints.add_argument("--steps", type=int, default=300_000)
    parser_checkpoints.add_argument("--every", type=int, default=4096)
    parser.add_argument("--folder", type=Path, default=Path("results/opensees_long_run"))
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    print(f"# {platform.platform()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    if args.what == "identity":
        identity(args.steps, args.folder)
    elif args.what == "discard":
        discard(args.after)
    elif args.what == "memory":
        memory(args.steps)
    elif args.what == "ratio":
        ratio(args.seconds, args.folder)
    else:
        checkpoints(args.steps, args.every, args.folder)


if __name__ == "__main__":
    main()
