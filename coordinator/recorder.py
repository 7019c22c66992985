"""Streaming HDF5 recorder: every completed step reaches the file, even when a run stops early.

Datasets grow along their first axis (one row per step) and are flushed
in blocks of steps and whenever the run ends, however it ends.  The
file is written in SWMR mode, so it stays readable while the test runs and
after a crash at any flush point.  Layout::

    /time, /step_id, /ground_acceleration, /wall_step_s         (n,)
    /displacement, /velocity, /acceleration, /restoring_force   (n, ndof)
    /modules/<name>/displacement, /modules/<name>/force          (n, module ndof)
    attrs: dofs, status ("running", "completed" or "stopped: <reason>"), completed_steps, ...
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import scipy.io


class Recorder:
    """Append-only writer of one run's response history.

    ``columns`` maps each dataset name to its width (0 for a scalar per
    step).  The caller keeps the full history in memory and calls
    :meth:`write` with the arrays and the number of rows now complete; only
    the rows not yet on disk are written.
    """

    def __init__(self, path: str | Path, columns: Mapping[str, int], *, dofs: Sequence[str],
                 attrs: Mapping[str, Any] | None = None, chunk: int = 256) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = h5py.File(self.path, "w", libver="latest")
        self._file.attrs["dofs"] = json.dumps(list(dofs))
        self._file.attrs["status"] = "running"
        self._file.attrs["completed_steps"] = 0
        for key, value in (attrs or {}).items():
            self._file.attrs[key] = value if isinstance(value, (int, float, str)) else json.dumps(value)
        for key, width in columns.items():
            shape, maxshape = ((0,), (None,)) if width == 0 else ((0, width), (None, width))
            dtype = np.int64 if key == "step_id" else np.float64
            self._file.create_dataset(key, shape=shape, maxshape=maxshape, dtype=dtype, chunks=(chunk,) + shape[1:])
        self._file.swmr_mode = True
        self.rows = 0

    def write(self, arrays: Mapping[str, np.ndarray], rows: int) -> None:
        """Write rows ``self.rows .. rows-1`` of every dataset from the full in-memory arrays; flush."""
        if rows > self.rows:
            for key, values in arrays.items():
                dataset = self._file[key]
                dataset.resize(rows, axis=0)
                dataset[self.rows:rows] = values[self.rows:rows]
            self.rows = rows
        self._file.attrs["completed_steps"] = self.rows
        self._file.flush()

    def close(self, status: str, summary: Mapping[str, Any] | None = None) -> None:
        """Mark the run ``completed`` or ``stopped: reason`` and close (rows must be written first)."""
        if not self._file.id.valid:
            return
        self._file.attrs["status"] = status
        if summary is not None:
            self._file.attrs["summary"] = json.dumps(summary)
        self._file.close()


def read_results(path: str | Path) -> dict[str, Any]:
    """All datasets and attributes of a results file as numpy arrays and Python values."""
    out: dict[str, Any] = {}
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
        out["attrs"] = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
    out["dofs"] = json.loads(out["attrs"]["dofs"])
    return out


def export(path: str | Path, target: str | Path) -> Path:
    """Write a results file as MATLAB ``.mat`` or as CSV (global response only) by ``target``'s suffix."""
    data = read_results(path)
    target = Path(target)
    if target.suffix == ".mat":
        flat = {k.replace("/", "_"): v for k, v in data.items() if isinstance(v, np.ndarray)}
        flat["dofs"] = np.array(data["dofs"], dtype=object)
        scipy.io.savemat(target, flat)
    elif target.suffix == ".csv":
        header = ["time"] + [f"{q}:{d}" for q in ("displacement", "velocity", "acceleration", "restoring_force")
                             for d in data["dofs"]]
        table = np.column_stack([data["time"]] + [data[q] for q in ("displacement", "velocity", "acceleration",
                                                                   "restoring_force")])
        np.savetxt(target, table, delimiter=",", header=",".join(header), comments="")
    else:
        raise ValueError(f"export target must end in .mat or .csv, got {target.name!r}")
    return target
