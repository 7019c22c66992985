"""Where the number of a module's streamed records breaks the results writer: a real write (``python
benchmarks/writer_records.py`` prints it; the cap it sets is :data:`hybridsim.coordinator.config_text.MAX_RECORDS`).

One module of one DOF streams ``records`` records of 4 columns; the file is created with them (as a run creates it),
then ``blocks`` blocks of ``rows`` rows each are written through the writer process, every record's rows with each
block of the run's rows and a checkpoint, as the step loop sends them (:class:`hybridsim.coordinator.run_loop.Records`).
The child process that writes is the one that may crash (HDF5's metadata cache past a few thousand datasets written
together, see :data:`~hybridsim.coordinator.config_text.MAX_MODULES`); what broke is its exit code or the writer's
line.  Every record is read back and compared with what was sent.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.recorder.client import Recorder
from hybridsim.coordinator.window import RowWindow, results_columns
from hybridsim.wire.contract import Record

COLUMNS = ("a", "b", "c", "d")


def _record(index: int, first: int, rows: int) -> Record:
    """Record ``index``'s rows ``first .. first + rows - 1``: row r, column c holds index + r + c / 10."""
    values = index + np.arange(first, first + rows)[:, None] + np.arange(len(COLUMNS))[None, :] / 10
    return Record(f"r{index}", values, ("m",) * len(COLUMNS), COLUMNS, first_row=first)


def _write(records: int, blocks: int, rows: int, folder: str) -> dict[str, Any]:
    """In a child: the write of the module's docstring; seconds and whether every record reads back whole."""
    modules = {"site": 1}
    columns = results_columns(1, modules)
    window = RowWindow(columns, modules, capacity=1024)
    path = Path(folder) / f"records{records}.h5"
    streamed = {"site": [_record(i, 0, 0) for i in range(records)]}
    started = time.perf_counter()
    recorder = Recorder(path, columns, dofs=["x"], checkpoint_state={"u": np.zeros(1)}, checkpoint_modules=["site"],
                        streamed=streamed)
    recorder.start(window)
    for block in range(blocks):
        window.rows = (block + 1) * rows
        recorder.submit(window.rows)
        recorder.records("site", [_record(i, block * rows, rows) for i in range(records)])
        recorder.checkpoint(window.rows - 1, window.rows - 1, {"u": np.zeros(1)}, {"site": b"state"})
    recorder.wait_written(blocks * rows)
    failure = recorder.failure
    recorder.close("completed")
    seconds = time.perf_counter() - started
    if failure is not None:
        return {"records": records, "failure": failure}
    with h5py.File(path, "r") as f:
        whole = all(np.array_equal(f[f"modules/site/records/r{i}"][()], _record(i, 0, blocks * rows).values)
                    for i in range(records))
    return {"records": records, "seconds": seconds, "read_back_whole": whole, "failure": None,
            "file_mib": path.stat().st_size / 2**20}


def _child(records: int, blocks: int, rows: int, folder: str, out: Any) -> None:
    try:
        out.send(_write(records, blocks, rows, folder))
    except BaseException as exc:  # noqa: BLE001 - what broke is the figure
        out.send({"records": records, "failure": f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"})


def write_figures(records: int, blocks: int = 4, rows: int = 256, timeout_s: float = 600.0) -> dict[str, Any]:
    """The write of the module's docstring with ``records`` records, and the load average; ``failure``: what broke."""
    context = multiprocessing.get_context("forkserver")
    with tempfile.TemporaryDirectory() as folder:
        reader, writer = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(records, blocks, rows, folder, writer))
        child.start()
        writer.close()
        try:
            figures = reader.recv() if reader.poll(timeout_s) else {"failure": f"over {timeout_s:.0f} s"}
        except EOFError:
            figures = {}
        child.join(timeout=5)
        child.kill()
        if "seconds" not in figures:
            figures = {"records": records, "failure": figures.get("failure") or f"child ended with {child.exitcode}"}
    figures["load_average"] = os.getloadavg()[0]
    return figures
