"""Where a run's DOF count breaks it: the rows a run keeps in memory (a closed form) and a real write of rows of
that width through the results writer (``python benchmarks/writer_dofs.py`` prints both; the cap they set is
:data:`hybridsim.coordinator.config_text.MAX_DOFS`).

A row holds 4 numbers per structure DOF (displacement, velocity, acceleration, restoring force) and 2 per module
DOF (its displacement and force); a run keeps :data:`~hybridsim.coordinator.window.WINDOW_ROWS` rows twice (the
window and the ring shared with the writer), 8 bytes a number: :func:`kept_bytes`.  The write: one module owning
every DOF, ``rows`` rows sent in blocks of ``block`` into a file of the recorder's layout (chunks of
:data:`~hybridsim.coordinator.recorder.layout.CHUNK_ROWS` rows, Fletcher32), in a child process whose address
space is capped (``limit_bytes``) so that a size the machine cannot hold fails there, not in its neighbours; the
last row of every dataset is read back.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.recorder.client import Recorder
from hybridsim.coordinator.window import WINDOW_ROWS, RowWindow, results_columns


def kept_bytes(ndof: int, module_dofs: int, rows: int = WINDOW_ROWS) -> int:
    """Bytes a run keeps for its rows: the window and the writer's ring, each ``rows`` rows of 4 numbers per
    structure DOF and 2 per module DOF (the scalar columns left out)."""
    return 2 * rows * 8 * (4 * ndof + 2 * module_dofs)


def _write(ndof: int, rows: int, block: int, folder: str, limit_bytes: int) -> dict[str, Any]:
    """In a child: ``rows`` rows of ``ndof`` DOFs written through a Recorder; seconds, writer peak memory, bytes."""
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    modules = {"all": ndof}
    columns = results_columns(ndof, modules)
    window = RowWindow(columns, modules, capacity=block)
    for values in window.arrays.values():
        values[...] = 1.0
    path = Path(folder) / f"dofs{ndof}.h5"
    started = time.perf_counter()
    recorder = Recorder(path, columns, dofs=[f"d{i}" for i in range(ndof)])
    created = time.perf_counter() - started
    recorder.start(window)
    started = time.perf_counter()
    for stop in range(block, rows + 1, block):
        window.rows = stop
        recorder.submit(stop)
        recorder.wait_written(stop)
    written = time.perf_counter() - started
    peak = _peak_kib(recorder._process.pid)  # noqa: SLF001
    failure = recorder.failure
    recorder.close("completed")
    with h5py.File(path, "r") as f:  # the last row of every dataset, as sent
        whole = failure is None and all(f[key].shape[0] == rows and np.all(f[key][-1] == 1.0) for key in columns)
    return {"ndof": ndof, "create_s": created, "write_s_per_row": written / rows, "writer_peak_mib": peak / 1024,
            "file_mib": path.stat().st_size / 2**20, "failure": failure, "read_back_whole": whole}


def _peak_kib(pid: int) -> int:
    """The peak resident memory (KiB) of process ``pid``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _child(ndof: int, rows: int, block: int, folder: str, limit_bytes: int, out: Any) -> None:
    try:
        out.send(_write(ndof, rows, block, folder, limit_bytes))
    except BaseException as exc:  # noqa: BLE001 - what broke is the figure
        out.send({"ndof": ndof, "failure": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"})


def write_figures(ndof: int, rows: int = 256, block: int = 64, limit_bytes: int = 8 * 2**30,
                  timeout_s: float = 600.0) -> dict[str, Any]:
    """A real write of ``rows`` rows of ``ndof`` DOFs (see the module's docstring), with the bytes a run of that
    size keeps in memory and the load average; ``failure``: what broke (a crash is the child's exit code)."""
    context = multiprocessing.get_context("forkserver")
    with tempfile.TemporaryDirectory(dir=os.environ.get("HYBRIDSIM_BENCH_DIR")) as folder:
        reader, writer = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(ndof, rows, block, folder, limit_bytes, writer))
        child.start()
        writer.close()
        figures = reader.recv() if reader.poll(timeout_s) else {"ndof": ndof, "failure": f"over {timeout_s:.0f} s"}
        child.kill()
        child.join()
        if child.exitcode not in (0, -9) and "write_s_per_row" not in figures:
            figures["failure"] = f"child ended with {child.exitcode}"
    figures["kept_gib"] = kept_bytes(ndof, ndof) / 2**30
    figures["load_average"] = os.getloadavg()[0]
    return figures
