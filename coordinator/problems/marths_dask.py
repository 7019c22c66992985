"""Benchmark runs on a Dask cluster (``--scheduler tcp://HOST:PORT``; the optional extra ``hybridsim[dask]``).

Every worker needs hybridsim installed; each run is one task, submitted in
the campaign's order and gathered in that order.
"""

from __future__ import annotations

from collections.abc import Sequence

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.problems import marths
from hybridsim.coordinator.problems.marths_campaign import RunResult, run_one


def run_on_dask(specs: Sequence[marths.RunSpec], scheduler: str, topology: str = "inprocess",
                keep_history: bool = True) -> list[RunResult]:
    """All runs of ``specs`` as tasks on the cluster whose scheduler is at ``scheduler``."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs Dask: pip install 'hybridsim[dask]'") from None
    try:
        client = Client(scheduler, timeout="20s")
    except OSError as exc:
        raise UsageError(f"--scheduler: cannot reach a Dask scheduler at {scheduler}: {exc}") from None
    with client:
        futures = [client.submit(run_one, spec, topology, keep_history, pure=False) for spec in specs]
        return client.gather(futures)
