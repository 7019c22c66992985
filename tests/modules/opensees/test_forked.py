"""A path-dependent OpenSees model in its worker process: discards and restores without replay, the family's
end, no leak.

The expected forces are the Steel01 bilinear law (closed form, as in
test_module.py) and, after a restore, the uninterrupted run's own forces bit
for bit; "nothing replayed" is the module's own count of imposed steps,
which the earlier rebuild-and-replay discard made grow with every committed
step.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hybridsim.wire.contract import ModuleError, Session, finish_run
from hybridsim.modules.opensees import OpenSeesModule, forked, worker
from hybridsim.modules.opensees.path import default_folder
from tests.modules.opensees.test_module import EPS_Y, MODELS, steel01_bilinear, step

SPRING = {"model": "springs.py", "control": [{"name": "u", "node": 2, "dof": 1}]}
REPOSITORY = Path(__file__).resolve().parents[3]


def _spring(config: dict = SPRING) -> OpenSeesModule:
    module = OpenSeesModule.from_config(config, base_dir=MODELS)
    module.open(Session(dt=0.01, dof_names=("u",)))
    return module


def _path(n: int) -> list[float]:
    """A cyclic path that yields the spring in both directions, growing."""
    k = np.arange(n)
    return list(EPS_Y * (1 + 4 * k / n) * np.sin(2 * np.pi * k / 50))


def test_discards_after_many_commits_replay_nothing_and_leave_no_trace() -> None:
    module = _spring()
    try:
        path = _path(60)
        committed: list[float] = []
        for n, u in enumerate(path):
            step(module, 3 * n, [u + 3 * EPS_Y], commit=False)         # two yielding trials, discarded
            step(module, 3 * n + 1, [u - 3 * EPS_Y], commit=False)
            force = step(module, 3 * n + 2, [u])[0]
            committed.append(u)
            assert force == pytest.approx(steel01_bilinear(committed)[-1], abs=1e-9)
        # the first discard after a commit found no copy (no scheme had discarded yet): one rebuild and a
        # replay of that one step; every discard since handed over to a copy of the committed state
        assert module.stats["rebuilds"] == 2
        assert module.stats["replayed_steps"] == 1
    finally:
        module.close()


def test_a_scheme_that_never_discards_takes_no_copies_and_its_first_discard_rebuilds_once() -> None:
    module = _spring()
    try:
        path = _path(120)
        for n, u in enumerate(path):
            step(module, n, [u])
        trial = step(module, 200, [path[-1] + 5 * EPS_Y], commit=False)[0]
        assert trial == pytest.approx(steel01_bilinear(path + [path[-1] + 5 * EPS_Y])[-1], abs=1e-9)
        force = step(module, 201, [0.0])[0]
        assert force == pytest.approx(steel01_bilinear(path + [0.0])[-1], abs=1e-9)
        assert (module.stats["rebuilds"], module.stats["replayed_steps"]) == (2, len(path))
    finally:
        module.close()


def test_commits_in_a_row_fork_no_copy_and_a_discard_after_them_lands_on_the_committed_state() -> None:
    """An iterating scheme whose steps end at their first trial (newmark at rest or moving elastically) commits
    many steps in a row: they join the worker's tail instead of forking a copy each (the family keeps its
    processes), and a discard then finds the exact committed state (the copy imposes the tail again)."""
    module = _spring()
    try:
        path = _path(80)
        step(module, 0, [path[0]])
        step(module, 1, [path[0] + 3 * EPS_Y], commit=False)          # the first discard: copies from here on
        keeper = module._worker._keeper.pid                           # type: ignore[union-attr]
        committed = [path[0]]
        step(module, 2, [path[1]])
        committed.append(path[1])
        before = _family(keeper)
        forks = 0
        for n, u in enumerate(path[2:12], start=3):                   # ten spring steps: well within the budget
            step(module, n, [u])
            committed.append(u)
            forks += len(_family(keeper) - before)
        assert forks == 0
        trial = step(module, 20, [committed[-1] + 4 * EPS_Y], commit=False)[0]
        assert trial == pytest.approx(steel01_bilinear(committed + [committed[-1] + 4 * EPS_Y])[-1], abs=1e-9)
        for n, u in enumerate(path[12:], start=21):                   # and on, through yielding, as the law says
            force = step(module, n, [u])[0]
            committed.append(u)
            assert force == pytest.approx(steel01_bilinear(committed)[-1], abs=1e-9)
        assert module.stats["replayed_steps"] == 1                    # the tail is imposed in the copy, not rebuilt
    finally:
        module.close()


def _family(root: int) -> set[int]:
    """Processes whose parent chain reaches ``root`` (the keeper and whatever it adopted)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found | ({root} if root in parents else set())


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone_within(pids: set[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while any(_running(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_worker_family_ends_with_the_module_and_with_its_process_killed() -> None:
    module = _spring()
    step(module, 0, [2 * EPS_Y])
    step(module, 1, [3 * EPS_Y], commit=False)
    step(module, 2, [EPS_Y], commit=False)                       # snapshots from here on
    keeper = module._worker._keeper.pid                           # type: ignore[union-attr]
    family = _family(keeper)
    assert len(family) >= 3                                       # keeper, worker, snapshot (+ spares)
    module.close()
    assert _gone_within(family, 10.0)

    module = _spring()
    for n, u in enumerate(_path(5)):                              # five checkpoints, copies of the last two
        step(module, n, [u])
        module.checkpoint()
    keeper = module._worker._keeper.pid                           # type: ignore[union-attr]
    assert _gone_within(_family(keeper) - {keeper, module._worker._worker_pid} - {  # type: ignore[union-attr]
        copy.pid for copy in module._worker.kept.values()}, 10.0)  # type: ignore[union-attr]
    assert len(module._worker.kept) == forked.KEPT_COPIES == 2    # type: ignore[union-attr]
    worker = module._worker._worker_pid                           # type: ignore[union-attr]
    module.close()                                                # parked: this process may restore them
    assert _gone_within({worker}, 10.0)
    family = _family(keeper)
    assert len(family) == 3                                       # the keeper and the two copies
    forked.end_parked()
    assert _gone_within(family, 10.0)

    script = textwrap.dedent(f"""
        import sys
        from hybridsim.modules.opensees import OpenSeesModule
        from hybridsim.wire.contract import Command, Session
        import numpy as np
        m = OpenSeesModule.from_config({SPRING!r}, base_dir={str(MODELS)!r})
        m.open(Session(dt=0.01, dof_names=("u",)))
        for n, u in enumerate([0.2, 0.3, 0.1]):
            m.propose(n, Command(time=0.01 * n, displacement=np.array([u])))
            m.execute(n)
            m.commit(n)
            m.checkpoint()
        keeper = m._worker._keeper.pid
        m.close()                                  # parked with its two kept copies
        print(keeper, flush=True)
        sys.stdin.read()
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             cwd=REPOSITORY, text=True)
    try:
        keeper = int(child.stdout.readline())                     # type: ignore[union-attr]
        family = _family(keeper)
        assert len(family) >= 3
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert _gone_within(family, 10.0)


def test_imposing_does_not_grow_native_memory() -> None:
    """The sp values are parameters of a fixed domain: 10,000 increments of the 19-DOF upper frame (the
    earlier pattern-per-increment way grew ~140 B per increment there: 1.4 MB) grow RSS by no page run."""
    import tomllib
    examples = REPOSITORY / "examples"
    module = OpenSeesModule.from_config(tomllib.loads((examples / "opensees_site_upper.toml").read_text()),
                                        base_dir=examples)
    try:
        model = module._model
        rng = np.random.default_rng(3)
        pattern = 1e-4 * rng.standard_normal((50, len(module.dofs)))

        def rss() -> int:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

        for k in range(1000):                                    # warm-up: allocators reach their size
            assert model.impose(pattern[k % 50], 1)
        before = rss()
        for k in range(10000):
            assert model.impose(pattern[k % 50], 1)
        assert rss() - before < 256 * 1024
    finally:
        module.close()


def test_a_checkpoint_is_bounded_names_the_path_on_the_sites_disk_and_refuses_it_changed(tmp_path,
                                                                                           monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    module = _spring()
    try:
        path = _path(300)
        sizes = []
        for n, u in enumerate(path):
            step(module, n, [u])
            if n in (0, 299):
                sizes.append(len(module.checkpoint()))
        saved = module.checkpoint()
        step(module, 2**40, [path[-1]])                                  # a step number of a 1e12-step run
        sizes.append(len(module.checkpoint()))
        module.restore(json.dumps(json.loads(saved)).encode())          # as earlier versions wrote it, unpadded
        assert sizes[0] < 400 and sizes == [sizes[0]] * 3                # bytes: 1, 300 and 301 rows, too
        step(module, 300, [-9 * EPS_Y])                                 # committed, then undone by restore
        module.restore(saved)
        force = step(module, 301, [EPS_Y])[0]
        assert force == pytest.approx(steel01_bilinear(path + [EPS_Y])[-1], abs=1e-9)
        module.checkpoint()                                              # (the rows are on disk)
        (file,) = (tmp_path / "hybridsim" / "opensees").iterdir()
        assert file.stat().st_size == 301 * 2 * 8                      # cut back to the checkpoint, then 1 row
        with open(file, "r+b") as f:
            f.seek(8)
            f.write(np.float64(0.5).tobytes())
        module.close()
        forked.end_parked()                                              # a restarted site: the file is read
        module = _spring()
        with pytest.raises(ModuleError, match=r"does not hold the checkpoint's 300 committed steps.*resume on the "
                                              r"site that ran"):
            module.restore(saved)
    finally:
        module.close()
        forked.end_parked()


def _forces(module: OpenSeesModule, first_step: int, path: list[float]) -> list[float]:
    return [step(module, first_step + n, [u])[0] for n, u in enumerate(path)]


def _committed(module: OpenSeesModule, path: list[float], after: tuple[int, ...]) -> tuple[list[float], dict]:
    """The forces of committing ``path`` from step 0, and the module's checkpoint after each step in ``after``."""
    forces, saved = [], {}
    for n, u in enumerate(path):
        forces.append(step(module, n, [u])[0])
        if n in after:
            saved[n] = module.checkpoint()
    return forces, saved


def test_a_restore_from_a_kept_copy_replays_nothing_and_continues_bit_for_bit() -> None:
    """A restore in the module that took the checkpoint, and in the module a site builds for the next session
    (the coordinator crashed; the site process lives on), takes up the worker's copy of that state."""
    path = _path(300)
    module = _spring()
    try:
        uninterrupted, saved = _committed(module, path, after=(99, 199))
        np.testing.assert_allclose(uninterrupted, steel01_bilinear(path), rtol=0, atol=1e-9)
        module.restore(saved[99])
        assert _forces(module, 300, path[100:]) == uninterrupted[100:]
        assert (module.stats["restores_from_copy"], module.stats["replayed_steps"]) == (1, 0)
        end = json.loads(module.checkpoint())["state"]
        module.close()                                            # what the next session's Open does
        module = _spring()
        module.restore(saved[199])
        assert _forces(module, 200, path[200:]) == uninterrupted[200:]
        assert (module.stats["restores_from_copy"], module.stats["replayed_steps"]) == (1, 0)
        assert module.stats["restore_s"] < 1.0
        # the committed path went on from the copy's checkpoint: the same rows, on disk and in the digest
        assert json.loads(module.checkpoint())["state"] == end
        rows = (default_folder() / end["path_file"]).read_bytes()
        assert (len(rows), hashlib.sha256(rows).hexdigest()) == (300 * 2 * 8, end["sha256"])
    finally:
        module.close()
        forked.end_parked()


def test_a_restore_without_its_copy_replays_the_path_to_the_same_forces() -> None:
    """The copy killed from outside, and the site process restarted (nothing parked): the restore replays."""
    path = _path(200)
    module = _spring()
    try:
        uninterrupted, checkpoints = _committed(module, path, after=(149,))
        saved = checkpoints[149]
        (copy,) = [kept.pid for key, kept in module._worker.kept.items()  # type: ignore[union-attr]
                   if key[1] == 150]
        os.kill(copy, signal.SIGKILL)
        assert _gone_within({copy}, 10.0)
        module.restore(saved)
        assert (module.stats["restores_by_replay"], module.stats["replayed_steps"]) == (1, 150)
        assert _forces(module, 200, path[150:]) == uninterrupted[150:]
        module.close()
        forked.end_parked()                                       # the site's process restarted
        module = _spring()
        module.restore(saved)
        assert (module.stats["restores_by_replay"], module.stats["replayed_steps"]) == (1, 150)
        assert _forces(module, 200, path[150:]) == uninterrupted[150:]
    finally:
        module.close()
        forked.end_parked()


def test_a_kernel_without_pidfds_keeps_no_copy_and_its_restores_replay(monkeypatch) -> None:
    """Before Linux 5.3 there is no pidfd_open (ENOSYS): checkpoints still work, no copy is kept, a restore
    replays the committed path to the same forces."""
    def no_pidfd(pid: int, flags: int = 0) -> int:
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    forked.pidfds_available.cache_clear()
    path = _path(60)
    module = _spring()
    try:
        uninterrupted, checkpoints = _committed(module, path, after=(39,))
        saved = checkpoints[39]
        assert not module._worker.kept                            # type: ignore[union-attr]
        module.restore(saved)
        assert (module.stats["restores_by_replay"], module.stats["replayed_steps"]) == (1, 40)
        assert _forces(module, 100, path[40:]) == uninterrupted[40:]
    finally:
        module.close()
        forked.pidfds_available.cache_clear()


def test_a_kept_copy_whose_worker_dies_or_does_not_answer_is_replayed_instead(monkeypatch, caplog) -> None:
    """The worker a kept copy forks for a restore is killed before it answers (the test hook holds its answer
    back for 30 s), then, at the next restore, outwaited (and killed): neither restore hangs, each replays the
    path in a fresh worker to the uninterrupted forces, and the log and the counters say so."""
    monkeypatch.setenv(worker.TAKE_UP_DELAY_ENV, "30")
    caplog.set_level(logging.INFO, logger="hybridsim.modules.opensees.module")
    path = _path(100)
    module = _spring()
    try:
        uninterrupted, saved = _committed(module, path, after=(59, 79))
        (copy,) = [kept.pid for key, kept in module._worker.kept.items()  # type: ignore[union-attr]
                   if key[1] == 60]
        failure: list[BaseException] = []
        restore = threading.Thread(target=lambda: _catching(failure, module.restore, saved[59]))
        restore.start()
        deadline = time.monotonic() + 10.0
        while not (spawned := _family(copy) - {copy}) and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(min(spawned), signal.SIGKILL)                     # the copy's new worker, before its answer
        restore.join(forked.LIVENESS_CHECK_S + 10.0)
        assert not restore.is_alive() and not failure, failure
        assert (module.stats["restores_by_replay"], module.stats["kept_copy_failures"],
                module.stats["replayed_steps"]) == (1, 1, 60)
        assert _forces(module, 100, path[60:80]) == uninterrupted[60:80]
        assert "its kept copy failed: opensees module (springs.py): the OpenSees worker process died during " \
               "'restore'" in caplog.text
        assert _gone_within({copy}, 10.0)                         # the failed family is ended

        monkeypatch.setattr(forked, "TAKE_UP_TIMEOUT_S", 0.5)
        again = module.checkpoint()                               # at step 79 again, in the replayed worker
        keeper = module._worker._keeper.pid                       # type: ignore[union-attr]
        started = time.monotonic()
        module.restore(again)
        assert time.monotonic() - started < 20.0                  # not the 30 s the copy's worker holds back
        assert (module.stats["restores_by_replay"], module.stats["kept_copy_failures"]) == (2, 2)
        assert "did not answer 'restore' within 0.5 s" in caplog.text
        assert _forces(module, 200, path[80:]) == uninterrupted[80:]
        assert _gone_within(_family(keeper) | {keeper}, 10.0)      # the family, the waiting worker killed
    finally:
        module.close()
        forked.end_parked()


def _catching(failures: list[BaseException], call, *args) -> None:  # type: ignore[no-untyped-def]
    try:
        call(*args)
    except BaseException as exc:  # noqa: BLE001 - reported by the test's thread
        failures.append(exc)


def test_a_stopped_runs_copies_and_path_file_expire_and_a_completed_runs_end_with_it(tmp_path, monkeypatch) -> None:
    """A stopped run's kept copies end after resume.kept_copies_s parked, its path file once a module starts
    after resume.path_files_s; a completed run (finish, then close) parks nothing and deletes its file, and so
    does a stopped session that no checkpoint names (no resume can use it)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    folder = default_folder()
    module = _spring({**SPRING, "resume": {"kept_copies_s": 1.0}})
    try:
        _committed(module, _path(20), after=(9, 19))
        copies = {kept.pid for kept in module._worker.kept.values()}  # type: ignore[union-attr]
        module.close()                                            # the coordinator stopped: parked
        assert len(forked._parked) == 1 and all(_running(pid) for pid in copies)
        assert _gone_within(copies, 10.0) and not forked._parked  # after 1 s parked
        (stopped,) = folder.iterdir()                             # its path file stays for a resume
        hours_ago = time.time() - 7200
        os.utime(stopped, (hours_ago, hours_ago))
        other = folder / f"{'0' * 32}.path"                       # another run's, written just now
        other.write_bytes(b"")
        module = _spring({**SPRING, "resume": {"path_files_s": 3600.0}})
        assert list(folder.iterdir()) == [other]                  # the stopped run's, untouched for 2 h: deleted
        _committed(module, _path(20), after=(9,))
        (copy,) = module._worker.kept.values()                    # type: ignore[union-attr]
        finish_run(module)                                        # the run completed
        module.close()
        assert not forked._parked and _gone_within({copy.pid}, 10.0)
        assert list(folder.iterdir()) == [other]
        module = _spring()
        _committed(module, _path(5), after=())
        module.close()                                            # stopped, but no checkpoint names its path
        assert list(folder.iterdir()) == [other] and not forked._parked
        with pytest.raises(ModuleError, match=r"^resume.kept_copies_s must be a number > 0 \(s\), got -1$"):
            _spring({**SPRING, "resume": {"kept_copies_s": -1}})
    finally:
        module.close()
        forked.end_parked()


def test_a_stopped_run_says_where_its_copies_and_path_wait_and_they_wait_minutes(tmp_path, monkeypatch, caplog) -> None:
    """By default a stopped run's kept copies are parked for 600 s (not a day), and the site's log names them (the
    frozen processes' pids) and the committed-path file, so that an operator knows what waits where."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    module = _spring()
    try:
        _committed(module, _path(20), after=(9, 19))
        pids = ", ".join(str(kept.pid) for kept in module._worker.kept.values())  # type: ignore[union-attr]
        (path,) = default_folder().iterdir()
        with caplog.at_level(logging.INFO):
            module.close()
        assert [family._parked_for_s for family in forked._parked] == [600.0]
        said = caplog.text
        assert (f"2 kept copies wait in this site's process for a resume (frozen child processes, pids {pids}; "
                "their memory), 600 s at most (resume.kept_copies_s)") in said
        assert f"the stopped run's committed path stays in {path} for a resume" in said
    finally:
        module.close()
        forked.end_parked(lambda key: True)
