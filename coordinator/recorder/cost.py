"""The results writer's cost per row with and without the per-chunk checksums, side by side (`hybridsim bench`'s
``writer_checksums``; ``python benchmarks/writer_checksums.py`` prints it alone).

A writer process writes ``rows`` rows of the maRTHS frame's layout (29 DOFs, three modules: the widest results
file of the reference problems) in blocks of 1024 rows, as a run's loop sends them, into a file with Fletcher32
on every dataset, into one without, and into one with Fletcher32 and [integrity]'s indicators of its site
(:mod:`hybridsim.coordinator.integrity.columns`), in turn, ``repeats`` times each; the figure is the writer
process's CPU time (user + system, from /proc) per row (median of the repeats), and the file's size per row.
:func:`lateness_with_and_without` runs a real-time run (bench's design card, its site loop at 1024 Hz) with the
results file written without and with checksums, one after the other in one bench run: late steps (%) and step p99.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.integrity.columns import indicator_columns
from hybridsim.coordinator.recorder import layout
from hybridsim.coordinator.recorder.client import Recorder
from hybridsim.coordinator.window import RowWindow, results_columns

DOFS = 29
MODULES = {"frame": 29, "column": 2, "site": 2}
BLOCK = 1024


def writer_cpu_s(recorder: Recorder) -> float:
    """CPU time (s) the recorder's writer process has used so far."""
    fields = Path(f"/proc/{recorder._process.pid}/stat").read_text().rsplit(")", 1)[1].split()  # noqa: SLF001
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def checksums_set(on: bool) -> Iterator[None]:
    """Results files created in this block carry the per-chunk checksums or not (``on``)."""
    kept, layout.CHECKSUMS = layout.CHECKSUMS, on
    try:
        yield
    finally:
        layout.CHECKSUMS = kept


def one_run(folder: Path, rows: int, checksums: bool, indicators: bool = False) -> tuple[float, float]:
    """(writer CPU us per row, file bytes per row) of ``rows`` rows written in blocks; ``indicators``: with the
    site's integrity indicators."""
    columns = results_columns(DOFS, MODULES) | indicator_columns({"site": MODULES["site"]} if indicators else {})
    window = RowWindow(columns, MODULES)
    rng = np.random.default_rng(1)
    for values in window.arrays.values():
        values[...] = rng.standard_normal(values.shape) if values.dtype.kind == "f" else np.arange(values.shape[0])
    path = folder / f"rows_{checksums}_{indicators}.h5"
    with checksums_set(checksums):
        recorder = Recorder(path, columns, dofs=[f"d{i}" for i in range(DOFS)])
    recorder.start(window)
    before = writer_cpu_s(recorder)
    for stop in range(BLOCK, rows + 1, BLOCK):
        window.rows = stop
        recorder.submit(stop)
    recorder.wait_written(rows)
    used = writer_cpu_s(recorder) - before
    recorder.close("completed")
    size = path.stat().st_size
    path.unlink()
    return 1e6 * used / rows, size / rows


def writer_checksums(rows: int = 65536, repeats: int = 3) -> dict[str, Any]:
    """The writer's CPU per row and bytes per row without and with checksums, with checksums and the indicators,
    and the load average."""
    runs: dict[str, list[tuple[float, float]]] = {"without": [], "with": [], "with_indicators": []}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(repeats):
            for name, checksums, indicators in (("without", False, False), ("with", True, False),
                                                ("with_indicators", True, True)):
                runs[name].append(one_run(Path(folder), rows, checksums, indicators))
    figures: dict[str, Any] = {
        name: {"writer_cpu_us_per_row": statistics.median(r[0] for r in values),
               "runs_us_per_row": [round(r[0], 2) for r in values],
               "bytes_per_row": statistics.median(r[1] for r in values)} for name, values in runs.items()}
    figures["load_average"] = os.getloadavg()
    return figures


def lateness_with_and_without(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``run()`` (a real-time run's summary figures) without and with checksums: its late steps (%) and step p50 and
    p99 (us) each, and the load average before and after."""
    figures: dict[str, Any] = {"load_average_before": os.getloadavg()}
    for name, on in (("without", False), ("with", True)):
        with checksums_set(on):
            late = run()
        figures[name] = {key: late[key] for key in ("late_steps_pct", "steps", "step_p50_us", "step_p99_us")}
    figures["load_average_after"] = os.getloadavg()
    return figures
