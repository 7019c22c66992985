"""Campaign executors: one task over many independent jobs, serially, on a process pool or on Dask.

A campaign (:mod:`hybridsim.coordinator.campaign.runner`: an experiment's runs, the maRTHS trials, the RLS-AC
calibration runs; the rehearsal's trials) is a top-level function ``task`` and a list of argument tuples, one per
job; every executor returns the results in the jobs' order and calls ``progress`` with each result as it
arrives.  :data:`EXECUTORS` is the table; :func:`executor_for` chooses from it: Dask when a scheduler is given
(``--scheduler tcp://HOST:PORT``; the optional extra ``hybridsim[dask]``, hybridsim installed on every worker),
a process pool for ``workers`` > 1, else serial.
The ``dask`` executor without a scheduler makes a LocalCluster of ``workers`` processes.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from hybridsim.coordinator.errors import UsageError
from hybridsim.wire.daemons_folders import multiprocessing_folder

R = TypeVar("R")
Progress = Callable[[Any], None] | None


@runtime_checkable
class Slotted(Protocol):
    """A progress that shows the runs in flight: the Dask executor sets ``slots`` to the cluster's worker threads
    (a remote scheduler's included) before each result it passes on."""

    slots: int | None


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
    """Every job as a task on the Dask cluster at ``resources.scheduler``, or on a LocalCluster of
    ``resources.workers`` processes; ``progress`` is called as each result arrives.  A job whose worker dies is
    given to another by the scheduler (a task that dies with three workers fails: ``KilledWorker``)."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError("--executor dask needs Dask: pip install 'hybridsim[dask]'") from None
    with _cluster(resources) as address:
        try:
            client = Client(address, timeout="20s")
        except OSError as exc:
            raise UsageError(f"--scheduler: cannot reach a Dask scheduler at {address}: {exc}") from None
        with client:
            services = client.scheduler_info().get("services", {})
            dashboard = client.dashboard_link if "dashboard" in services else "none (pip install bokeh)"
            print(f"dask: scheduler {address}, dashboard {dashboard}", file=sys.stderr)
            futures = [client.submit(task, *job, pure=False) for job in jobs]
            for future in as_completed(futures):
                if isinstance(progress, Slotted):  # the cluster as it is now: workers come and go
                    progress.slots = sum(client.nthreads().values())
                if progress:
                    progress(future.result())
            return client.gather(futures)


@contextlib.contextmanager
def _cluster(resources: Resources) -> Iterator[str]:
    """The scheduler's address: ``resources.scheduler``, or a LocalCluster's made for the campaign and closed
    after it.  Its workers are not daemonic: a run's results writer is a child process of the worker."""
    if resources.scheduler is not None:
        yield resources.scheduler
        return
    import dask as dask_config
    from distributed import LocalCluster

    with dask_config.config.set({"distributed.worker.daemon": False}), LocalCluster(
            n_workers=resources.workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


EXECUTORS: dict[str, Callable[..., list]] = {"serial": serial, "pool": process_pool, "dask": dask}


def executor_for(resources: Resources, jobs: int) -> str:
    """The name in :data:`EXECUTORS` that runs ``jobs`` jobs on ``resources``."""
    if resources.scheduler is not None:
        return "dask"
    return "pool" if resources.workers > 1 and jobs > 1 else "serial"

