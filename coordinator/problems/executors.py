"""Campaign executors: one task over many independent jobs, serially, on a process pool or on Dask.

A campaign (the maRTHS trials, the RLS-AC calibration runs) is a top-level
function ``task`` and a list of argument tuples, one per job; every executor
returns the results in the jobs' order and calls ``progress`` with each
result as it arrives.  :data:`EXECUTORS` is the table; :func:`execute`
chooses from it: Dask when a scheduler is given (``--scheduler
tcp://HOST:PORT``; the optional extra ``hybridsim[dask]``, hybridsim
installed on every worker), a process pool for ``workers`` > 1, else serial.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from hybridsim.coordinator.errors import UsageError
from hybridsim.wire.daemons_folders import multiprocessing_folder

R = TypeVar("R")
Progress = Callable[[Any], None] | None


@dataclass(frozen=True)
class Resources:
    """Where a campaign runs: ``workers`` processes on this machine (started by ``start_method`` of
    :mod:`multiprocessing`), or the Dask cluster at ``scheduler``."""

    workers: int = 1
    scheduler: str | None = None
    start_method: str = "fork"


def serial(task: Callable[..., R], jobs: Sequence[tuple], resources: Resources, progress: Progress) -> list[R]:
    """Every job in this process, one after the other."""
    results = []
    for job in jobs:
        results.append(task(*job))
        if progress:
            progress(results[-1])
    return results


def process_pool(task: Callable[..., R], jobs: Sequence[tuple], resources: Resources, progress: Progress) -> list[R]:
    """Every job on a pool of ``resources.workers`` processes (multiprocessing's temporary files in this process's
    own folder, swept after a kill -9, not a ``pymp-*`` one)."""
    multiprocessing_folder()
    context = multiprocessing.get_context(resources.start_method)
    with concurrent.futures.ProcessPoolExecutor(min(resources.workers, len(jobs)), mp_context=context) as pool:
        futures = [pool.submit(task, *job) for job in jobs]
        for future in concurrent.futures.as_completed(futures):
            if progress:
                progress(future.result())
        return [f.result() for f in futures]


def dask(task: Callable[..., R], jobs: Sequence[tuple], resources: Resources, progress: Progress) -> list[R]:
    """Every job as a task on the Dask cluster whose scheduler is at ``resources.scheduler``."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs Dask: pip install 'hybridsim[dask]'") from None
    try:
        client = Client(resources.scheduler, timeout="20s")
    except OSError as exc:
        raise UsageError(f"--scheduler: cannot reach a Dask scheduler at {resources.scheduler}: {exc}") from None
    with client:
        results = client.gather([client.submit(task, *job, pure=False) for job in jobs])
    for result in results if progress else ():
        progress(result)
    return results


EXECUTORS: dict[str, Callable[..., list]] = {"serial": serial, "pool": process_pool, "dask": dask}


def executor_for(resources: Resources, jobs: int) -> str:
    """The name in :data:`EXECUTORS` that runs ``jobs`` jobs on ``resources``."""
    if resources.scheduler is not None:
        return "dask"
    return "pool" if resources.workers > 1 and jobs > 1 else "serial"


def execute(task: Callable[..., R], jobs: Sequence[tuple], resources: Resources = Resources(),
            progress: Progress = None, before_fork: Callable[[], None] | None = None) -> list[R]:
    """``task(*job)`` for every job, in the jobs' order; ``before_fork`` computes, before a process pool starts,
    what its workers then inherit instead of each computing it again."""
    name = executor_for(resources, len(jobs))
    if name == "pool" and before_fork is not None:
        before_fork()
    return EXECUTORS[name](task, jobs, resources, progress)
