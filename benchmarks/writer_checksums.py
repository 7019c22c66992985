"""The results writer's cost per step with and without the per-chunk checksums, side by side.

    python benchmarks/writer_checksums.py [--rows 65536] [--repeats 3] [--json]

A writer process writes ROWS rows of the maRTHS frame's layout (29 DOFs, three modules: the widest results file
of the reference problems) in blocks of 1024 rows, as a run's loop sends them, into a file with Fletcher32 on
every dataset and into one without, alternately, REPEATS times each; the figure is the writer process's CPU time
(user + system, from /proc) per row, and the file's size per row.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

import numpy as np

from hybridsim.coordinator.recorder import Recorder, layout
from hybridsim.coordinator.window import RowWindow, results_columns

DOFS = 29
MODULES = {"frame": 29, "column": 2, "site": 2}
BLOCK = 1024


def writer_cpu_s(recorder: Recorder) -> float:
    """CPU time (s) the recorder's writer process has used so far."""
    fields = Path(f"/proc/{recorder._process.pid}/stat").read_text().rsplit(")", 1)[1].split()  # noqa: SLF001
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(folder: Path, rows: int, checksums: bool) -> tuple[float, float]:
    """(writer CPU us per row, file bytes per row) of ``rows`` rows written in blocks."""
    layout.CHECKSUMS = checksums
    columns = results_columns(DOFS, MODULES)
    window = RowWindow(columns, MODULES)
    rng = np.random.default_rng(1)
    for values in window.arrays.values():
        values[...] = rng.standard_normal(values.shape) if values.dtype.kind == "f" else np.arange(values.shape[0])
    path = folder / f"rows_{checksums}.h5"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=65536)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs: dict[str, list[tuple[float, float]]] = {"without": [], "with": []}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeats):
            for name, checksums in (("without", False), ("with", True)):
                runs[name].append(one_run(Path(folder), args.rows, checksums))
    figures = {name: {"writer_cpu_us_per_row": statistics.median(r[0] for r in values),
                      "runs_us_per_row": [round(r[0], 2) for r in values],
                      "bytes_per_row": statistics.median(r[1] for r in values)} for name, values in runs.items()}
    figures["load_average"] = os.getloadavg()
    if args.json:
        print(json.dumps(figures))
        return
    for name in ("without", "with"):
        f = figures[name]
        print(f"{name} checksums: writer {f['writer_cpu_us_per_row']:.2f} us of CPU per row (runs "
              f"{f['runs_us_per_row']}), {f['bytes_per_row']:.0f} bytes per row")
    print(f"load average {figures['load_average'][0]:.2f}")


if __name__ == "__main__":
    main()
