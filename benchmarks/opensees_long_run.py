"""A path-dependent OpenSees site over long runs: discard cost, native memory, newmark vs alpha-os (issue 17).

    python benchmarks/opensees_long_run.py identity [--steps 2000]
    python benchmarks/opensees_long_run.py discard [--after 100 10000 100000]
    python benchmarks/opensees_long_run.py memory [--steps 100000]
    python benchmarks/opensees_long_run.py ratio [--seconds S]
    python benchmarks/opensees_long_run.py checkpoints [--steps 300000] [--every 4096]
    python benchmarks/opensees_long_run.py resume [--kill-after 20480]

identity  `newmark` over examples/opensees_frame_hybrid_steel01.toml (three OpenSees daemons, the
          portal's Steel01 column yielding) for STEPS steps, compared with the displacements the
          rebuild-and-replay module gave (benchmarks/data/newmark_steel01_frame_first2000.npz, saved from
          main at 1859ed3 before the worker process): max |d - d_ref| / max |d_ref| per DOF; first with
          the residual test alone (the scheme of the reference, 9-11 evaluations per step, every trial but
          the last discarded), then with the default test (one evaluation per step at rest).
discard   the portal site in process: after N committed steps, p50 of one trial that is discarded
          followed by the trial that is committed (what an iteration of newmark costs at that site);
          it must not grow with N.
memory    resident memory of a site process imposing STEPS increments on the 19-DOF `upper` frame (in
          process) and of the portal's worker process over STEPS committed steps: growth per 100,000.
ratio     wall time of `newmark` and `alpha-os` over the first S seconds of the record (default: all), one
          after the other in one process; each one's compute time of its first and last tenth of steps and
          its module evaluations per step.
checkpoints  the Steel01 frame under alpha-os for STEPS steps (El Centro repeated) with a checkpoint
          every EVERY steps, the portal served by a site daemon of its own, the run stopped after its last
          checkpoint (a completed run keeps nothing for a resume): each module's checkpoint size
          at the first and the last, the run's wall time; then, as a resume would, a new session at that
          site restores the last checkpoint from the worker's kept copy (timed; the kept copies' memory),
          and a restarted site restores it by replaying the committed path (timed); one step after each
          restore gives the same forces bit for bit.
resume    `hybridsim run` of examples/opensees_frame_hybrid_steel01.toml (a checkpoint every 4096 steps) with
          the portal at a site daemon of its own, the coordinator killed (SIGKILL) once a checkpoint at
          or past step KILL_AFTER is on disk, `hybridsim resume`; the resumed results against an
          uninterrupted run of the same, and how the portal site restored (its summary line and log).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np

from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import Experiment, load_experiment
from hybridsim.coordinator.recorder import read_checkpoint, read_results
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.opensees import OpenSeesModule
from hybridsim.wire.contract import Command, Session
from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.remote import RemoteModule

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
FRAME = EXAMPLES / "opensees_frame_hybrid_steel01.toml"
REFERENCE = Path(__file__).parent / "data" / "newmark_steel01_frame_first2000.npz"


def frame(integrator: str, steps: int | None, **options: float) -> Experiment:
    """The Steel01 frame under ``integrator`` (with ``options``) over its first ``steps`` steps (None: the
    whole record)."""
    experiment = load_experiment(FRAME)
    options = {"alpha": -0.05, **options} if integrator == "alpha-os" else options
    experiment = dataclasses.replace(experiment, integrator=integrator, integrator_options=options)
    if steps is not None:
        motion = experiment.motion
        experiment = dataclasses.replace(experiment, motion=dataclasses.replace(
            motion, acceleration=motion.acceleration[:steps + 1]))
    return experiment


def identity(steps: int, folder: Path) -> None:
    reference = np.load(REFERENCE)["displacement"][:steps + 1]
    scale = np.max(np.abs(reference), axis=0)
    for test, options in (("the residual test alone, as when the reference was saved", {"displacement_tolerance": 0.0}),
                          ("the default convergence test", {})):
        start = time.perf_counter()
        result = run_experiment(frame("newmark", steps, **options), output=folder / "identity.h5", overwrite=True)
        wall = time.perf_counter() - start
        d = result.displacement
        relative = np.max(np.abs(d - reference), axis=0) / np.where(scale > 0, scale, 1.0)
        print(f"newmark with {test}, Steel01 frame, {steps} steps in {wall:.1f} s "
              f"({result.summary['module_evaluations']['per_step']:.2f} module evaluations per step): "
              f"max |d - d_ref| / max |d_ref| over the {len(result.dofs)} DOFs = {relative.max():.3g} (worst "
              f"{result.dofs[int(relative.argmax())]}); max |d - d_ref| = {np.max(np.abs(d - reference)):.3g} m "
              f"or rad, max |d_ref| = {np.max(np.abs(reference)):.3g}; bit-identical DOFs: "
              f"{int(np.sum(np.all(d == reference, axis=0)))} of {len(result.dofs)}")


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
        tenths = np.array_split(read_results(result.output)["wall_step_s"][1:], 10)
        line = (f"{integrator:>8}: {n} steps in {walls[integrator]:.1f} s ({n / walls[integrator]:.1f} steps/s; "
                f"compute of the first / last tenth {tenths[0].sum():.1f} / {tenths[-1].sum():.1f} s), "
                f"{result.summary['module_evaluations']['per_step']:.3f} module evaluations per step "
                f"(at most {result.summary['module_evaluations']['max_in_a_step']})")
        if integrator == "newmark":
            line += f", portal replayed {result.summary['modules']['portal']['replayed_steps']:.0f} steps"
        print(line)
    print(f"newmark / alpha-os wall time: {walls['newmark'] / walls['alpha-os']:.2f} "
          f"(load average {os.getloadavg()[0]:.1f} at the end)")


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

    portal = tomllib.loads((EXAMPLES / "opensees_site_bay_steel01.toml").read_text())
    output = folder / "checkpoints.h5"
    Recorder.checkpoint = measured  # type: ignore[method-assign]
    try:
        with LocalDaemon("opensees", portal, base_dir=EXAMPLES, name="portal") as daemon:
            address = daemon.address
            experiment = dataclasses.replace(experiment, modules=tuple(
                dataclasses.replace(m, address=address) if m.name == "portal" else m for m in experiment.modules))
            last = (steps - 1) // every * every     # stopped after it, as a crashed coordinator: a completed run
            control = RunControl()                  # would leave no kept copy and no path file to restore from

            def stop(n: int, _rows: object) -> None:
                if n == last:
                    control.abort("stopped after the last checkpoint")

            start = time.perf_counter()
            try:
                run_experiment(experiment, output=output, overwrite=True, control=control, listeners=[stop])
            except RunStopped:
                pass
            wall = time.perf_counter() - start
            Recorder.checkpoint = write  # type: ignore[method-assign]
            print(f"alpha-os, Steel01 frame, {last} steps ({steps // record.size + 1} x El Centro, stopped after the "
                  f"last checkpoint), {len(sizes)} checkpoints, {wall:.0f} s ({last / wall:.0f} steps/s)")
            for name in sizes[0][1]:
                print(f"  {name}: checkpoint {sizes[0][1][name]} B at step {sizes[0][0]}, {sizes[-1][1][name]} B "
                      f"at step {sizes[-1][0]}")
            import h5py
            with h5py.File(output) as f:
                slot = int(f["checkpoint/current"][0])
                state = bytes(f[f"checkpoint/slot{slot}/modules/portal"][:])
            print("  the portal site's kept copies after the run: " + ", ".join(
                f"{pss / 1e6:.1f} MB PSS ({own / 1e6:.1f} MB private)" for pss, own in _kept_memory(daemon.pid)))
            kept = _restore_at(address, state, "a new session at the portal site (its process lived on)")
        with LocalDaemon("opensees", portal, base_dir=EXAMPLES, name="portal") as daemon:
            replayed = _restore_at(daemon.address, state, "a restarted portal site (nothing kept)")
        print(f"  forces one step after each restore bit-identical: {bool(np.array_equal(kept, replayed))}")
    finally:
        Recorder.checkpoint = write  # type: ignore[method-assign]


def resume(kill_after: int, folder: Path) -> None:
    portal = tomllib.loads((EXAMPLES / "opensees_site_bay_steel01.toml").read_text())
    with LocalDaemon("opensees", portal, base_dir=EXAMPLES, name="portal") as daemon:
        files = {name: folder / f"{name}.h5" for name in ("uninterrupted", "killed")}
        for name, results in files.items():
            (folder / f"{name}.toml").write_text(_frame_at(daemon.address, results))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "hybridsim", "run", str(folder / "uninterrupted.toml"), "--quiet",
                        "--overwrite"], check=True)
        print(f"uninterrupted run: {time.perf_counter() - start:.0f} s")
        files["killed"].unlink(missing_ok=True)
        runner = subprocess.Popen([sys.executable, "-m", "hybridsim", "run", str(folder / "killed.toml"), "--quiet"])
        while not files["killed"].exists() or (_checkpoint_step(files["killed"]) or 0) < kill_after:
            if runner.poll() is not None:
                raise SystemExit("the run ended before it was killed")
            time.sleep(0.05)
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        killed_at = read_results(files["killed"])["attrs"]["completed_steps"]
        checkpoint = _checkpoint_step(files["killed"])
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "hybridsim", "resume", str(files["killed"])], check=True,
                              capture_output=True, text=True)
        print(f"coordinator killed (SIGKILL) after {killed_at} completed steps, checkpoint at step {checkpoint}; "
              f"hybridsim resume: {time.perf_counter() - start:.0f} s")
        print("  " + next(line for line in done.stdout.splitlines() if line.startswith("portal: checkpoint")))
        assert daemon.log_path is not None
        print("  portal site log: " + [line for line in daemon.log_path.read_text().splitlines()
                                       if "checkpoint restored" in line][-1])
    results = {name: read_results(path) for name, path in files.items()}
    d = {name: r["displacement"] for name, r in results.items()}
    print(f"  resumed vs uninterrupted, {d['killed'].shape[0]} rows x {d['killed'].shape[1]} DOFs: bit-identical "
          f"{bool(np.array_equal(d['killed'], d['uninterrupted']))}, max |difference| "
          f"{np.max(np.abs(d['killed'] - d['uninterrupted'])):.3g} m = "
          f"{np.max(np.abs(d['killed'] - d['uninterrupted'])) / np.max(np.abs(d['uninterrupted'])):.2g} of the peak")
    first = checkpoint + 1                                    # the first step after the restore: same commands
    for name in ("portal", "upper", "lower"):
        forces = [r[f"modules/{name}/force"][first] for r in results.values()]
        print(f"  {name}'s forces at step {first} (the first after the restore, same displacements): "
              f"bit-identical {bool(np.array_equal(*forces))}")


def _frame_at(portal: str, results: Path) -> str:
    """The example's experiment with its portal at the site ``portal`` (HOST:PORT), results in ``results`` and
    a checkpoint every 4096 steps."""
    head, tail = FRAME.read_text().split('name = "portal"')
    text = head + 'name = "portal"' + tail.replace('address = "local"', f'address = "{portal}"', 1)
    return text.replace('config_file = "', f'config_file = "{EXAMPLES}/').replace(
        'file = "results/opensees_frame_hybrid_steel01.h5"', f'file = "{results}"\ncheckpoint_every = 4096')


def _checkpoint_step(path: Path) -> int | None:
    """The step of the last checkpoint of a results file being written (None: none yet or not readable)."""
    try:
        checkpoint = read_checkpoint(path)
    except OSError:
        return None
    return None if checkpoint is None else checkpoint.step


def _restore_at(address: str, state: bytes, who: str) -> np.ndarray:
    """Open a session at the site at ``address``, restore ``state`` (timed, as the module reports it), impose
    one step; the forces (N, N*m)."""
    site = RemoteModule(address, name="portal", deadline_s=600.0)
    try:
        site.open(Session(dt=1 / 1024, dof_names=site.describe().dof_names))
        t0 = time.perf_counter()
        site.restore(state)
        seconds = time.perf_counter() - t0
        step = json.loads(state)["committed_step"] + 1
        site.propose(step, Command(time=step / 1024, displacement=_target(1, 2)))
        forces = site.execute(step).force
    finally:
        stats = site.close()
    how = "from a kept copy" if stats["restores_from_copy"] else f"by replaying {stats['replayed_steps']:.0f} steps"
    print(f"  {who}: Restore call {seconds:.3f} s, of which the module's restore {stats['restore_s']:.3f} s, "
          f"{how}")
    return forces


def _kept_memory(daemon: int) -> list[tuple[int, int]]:
    """(PSS, private bytes) of each kept copy in the worker family the ``daemon`` process parked (the keeper's
    children once the worker has quit)."""
    copies = [copy for keeper in _children(daemon) for copy in _children(keeper)]
    out = []
    for pid in copies:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            fields = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in f if line.endswith("kB\n")}
        out.append((fields["Pss"], fields["Private_Clean"] + fields["Private_Dirty"]))
    return out


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


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
    sub.add_parser("resume").add_argument("--kill-after", type=int, default=20480)
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
    elif args.what == "checkpoints":
        checkpoints(args.steps, args.every, args.folder)
    else:
        resume(args.kill_after, args.folder)


if __name__ == "__main__":
    main()
