"""Streaming HDF5 recorder: every completed step reaches the file, even when a run stops early.

Datasets grow along their first axis (one row per step) and are flushed
in blocks of steps and whenever the run ends, however it ends.  The
file is written in SWMR mode, so it stays readable while the test runs and
after a crash at any flush point.  Layout::

    /time, /step_id, /ground_acceleration, /wall_step_s         (n,)
    /displacement, /velocity, /acceleration, /restoring_force   (n, ndof)
    /modules/<name>/displacement, /modules/<name>/force          (n, module ndof)
    /modules/<name>/records/<record>                             a module's own records (rows x columns)

Every dataset carries ``units`` (one per column, or one string) and, over DOFs, ``dofs``; every
module group its ``kind``, ``where``, ``dofs`` and ``units`` (see :func:`hybridsim.coordinator.units.labels`).

``/restoring_force`` is the integrator's committed restoring force (for alpha-OS the measured
force corrected with K_I; with condensed massless DOFs, T^T r on the DOFs kept, zero on the others);
what each module measured is in ``/modules/<name>/``.
    attrs: dofs, status ("running", "completed" or "stopped: <reason>"), completed_steps,
           stop (a stopped run: JSON {reason, step, time_s, module, cause}), ...
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.wire.contract import Record


class ResponseHistory:
    """Preallocated in-memory response arrays (steps x width), one per results dataset."""

    def __init__(self, rows: int, ndof: int, modules: Mapping[str, int]) -> None:
        self.columns: dict[str, int] = {"time": 0, "step_id": 0, "ground_acceleration": 0, "wall_step_s": 0,
                                        "displacement": ndof, "velocity": ndof, "acceleration": ndof,
                                        "restoring_force": ndof}
        for name, width in modules.items():
            self.columns[f"modules/{name}/displacement"] = width
            self.columns[f"modules/{name}/force"] = width
        self.arrays = {key: np.zeros((rows, width) if width else rows, dtype=np.int64 if key == "step_id" else float)
                       for key, width in self.columns.items()}
        self.modules = [(self.arrays[f"modules/{name}/displacement"], self.arrays[f"modules/{name}/force"])
                        for name in modules]
        self.rows = 0

    def load(self, stored: Mapping[str, np.ndarray], rows: int) -> None:
        """Fill rows 0..rows-1 from arrays read back from a results file."""
        for key, values in self.arrays.items():
            values[:rows] = stored[key][:rows]
        self.rows = rows


class Recorder:
    """Append-only writer of one run's response history, its model and its checkpoints.

    ``columns`` maps each dataset name to its width (0 for a scalar per
    step).  The caller keeps the full history in memory and calls
    :meth:`write` with the arrays and the number of rows now complete; only
    the rows not yet on disk are written.

    Checkpoints are double-buffered (``/checkpoint/slot0``, ``slot1``): a new
    one is written into the slot not in use, flushed, and only then does
    ``/checkpoint/current`` = [slot, step, step_id] point to it, so a crash at
    any moment leaves the last complete checkpoint readable.
    """

    def __init__(self, path: str | Path, columns: Mapping[str, int], *, dofs: Sequence[str],
                 attrs: Mapping[str, Any] | None = None, model: Mapping[str, np.ndarray] | None = None,
                 checkpoint_state: Mapping[str, np.ndarray] | None = None, checkpoint_modules: Sequence[str] = (),
                 chunk: int = 256, labels: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        f = self._file = h5py.File(self.path, "w", libver="latest")
        f.attrs["dofs"] = json.dumps(list(dofs))
        f.attrs["status"] = "running"
        f.attrs["completed_steps"] = 0
        f.attrs["summary"] = ""
        for key, value in (attrs or {}).items():
            f.attrs[key] = value if isinstance(value, (int, float, str)) else json.dumps(value)
        for key, width in columns.items():
            shape, maxshape = ((0,), (None,)) if width == 0 else ((0, width), (None, width))
            dtype = np.int64 if key == "step_id" else np.float64
            f.create_dataset(key, shape=shape, maxshape=maxshape, dtype=dtype, chunks=(chunk,) + shape[1:])
        for key, matrix in (model or {}).items():
            f.create_dataset(f"model/{key}", data=np.asarray(matrix))
        for key, values in (labels or {}).items():
            (f[key] if key in f else f.create_group(key)).attrs.update(values)
        if checkpoint_state is not None:
            f.create_dataset("checkpoint/current", data=np.array([-1, -1, -1], dtype=np.int64))
            for slot in ("slot0", "slot1"):
                for key, value in checkpoint_state.items():
                    f.create_dataset(f"checkpoint/{slot}/integrator/{key}", data=np.zeros_like(np.asarray(value)))
                for name in checkpoint_modules:
                    f.create_dataset(f"checkpoint/{slot}/modules/{name}", shape=(0,), maxshape=(None,),
                                     dtype=np.uint8, chunks=(4096,))
        f.swmr_mode = True
        self.rows = 0

    @classmethod
    def reopen(cls, path: str | Path, rows: int) -> "Recorder":
        """Continue writing a results file after its row ``rows - 1`` (later rows are dropped)."""
        self = cls.__new__(cls)
        self.path = Path(path)
        try:
            self._file = h5py.File(self.path, "r+", libver="latest")
        except OSError:  # a writer killed in SWMR mode leaves the file marked open for writing
            _rewrite(self.path)
            self._file = h5py.File(self.path, "r+", libver="latest")
        def truncate(name: str, obj: Any) -> None:
            growing = isinstance(obj, h5py.Dataset) and obj.maxshape[:1] == (None,)
            if growing and not name.startswith("checkpoint/"):
                obj.resize(rows, axis=0)

        self._file.visititems(truncate)
        self._file.attrs["status"] = "running"
        self._file.attrs.pop("stop", None)
        self._file.attrs["completed_steps"] = rows
        self._file.swmr_mode = True
        self.rows = rows
        return self

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

    def checkpoint(self, step: int, step_id: int, state: Mapping[str, np.ndarray], modules: Mapping[str, bytes]) -> None:
        """Store a consistent restart point after ``step`` (its rows must already be written)."""
        current = self._file["checkpoint/current"]
        slot = "slot1" if current[0] == 0 else "slot0"
        for key, value in state.items():
            self._file[f"checkpoint/{slot}/integrator/{key}"][...] = value
        for name, blob in modules.items():
            dataset = self._file[f"checkpoint/{slot}/modules/{name}"]
            dataset.resize(len(blob), axis=0)
            dataset[:] = np.frombuffer(blob, dtype=np.uint8)
        self._file.flush()
        current[...] = [int(slot[-1]), step, step_id]
        self._file.flush()

    def close(self, status: str, summary: Mapping[str, Any] | None = None,
              stop: Mapping[str, Any] | None = None) -> None:
        """Mark the run ``completed`` or ``stopped: reason`` and close (rows must be written first).

        ``stop`` (attribute "stop", JSON) says why and where a stopped run stopped: reason, step, time_s, module.
        """
        if not self._file.id.valid:
            return
        self._file.attrs["status"] = status
        if summary is not None:
            self._file.attrs["summary"] = json.dumps(summary)
        if stop is not None:
            self._file.attrs["stop"] = json.dumps(stop)
        self._file.close()


def _rewrite(path: Path) -> None:
    """Copy a results file whose writer died (still marked open for SWMR writing) into a clean one."""
    fresh = path.with_name(f".{path.name}.resumed")
    with h5py.File(path, "r", libver="latest", swmr=True) as old, h5py.File(fresh, "w", libver="latest") as new:
        for key, value in old.attrs.items():
            new.attrs[key] = value
        for name in old:
            old.copy(old[name], new, name=name)
    os.replace(fresh, path)


@dataclass(frozen=True)
class Checkpoint:
    """The last consistent restart point of a results file."""

    step: int
    """time-step index n of the checkpointed (committed) step"""
    step_id: int
    """the module step ID committed at step n"""
    integrator: dict[str, np.ndarray]
    modules: dict[str, bytes]


def read_checkpoint(path: str | Path) -> Checkpoint | None:
    """The last complete checkpoint of a results file, or None if it has none."""
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        if "checkpoint/current" not in f:
            return None
        slot, step, step_id = (int(v) for v in f["checkpoint/current"][()])
        if slot < 0:
            return None
        group = f[f"checkpoint/slot{slot}"]
        integrator = {k: v[()] for k, v in group["integrator"].items()}
        modules = {k: v[()].tobytes() for k, v in group["modules"].items()} if "modules" in group else {}
        return Checkpoint(step, step_id, integrator, modules)


def write_records(path: str | Path, records: Mapping[str, Sequence[Record]], errors: Mapping[str, str]) -> None:
    """Store modules' own records in a closed results file: ``/modules/<name>/records/<record>`` with
    ``units``, ``columns`` and ``description``; a module that could not give them gets ``records_error``."""
    with h5py.File(path, "r+", libver="latest") as f:
        for name, module_records in records.items():
            for record in module_records:
                key = f"modules/{name}/records/{record.name}"
                if key in f:
                    del f[key]
                dataset = f.create_dataset(key, data=np.asarray(record.values, dtype=float))
                dataset.attrs.update({"units": list(record.units), "columns": list(record.columns),
                                      "description": record.description})
        for name, error in errors.items():
            f.require_group(f"modules/{name}").attrs["records_error"] = error


def annotate(path: str | Path, key: str, value: Any) -> None:
    """Add an attribute (JSON for anything but a string) to a closed results file."""
    with h5py.File(path, "r+", libver="latest") as f:
        f.attrs[key] = value if isinstance(value, str) else json.dumps(value)


def read_attributes(path: str | Path) -> dict[str, Any]:
    """The attributes of a results file (experiment, status, summary, ...) without its datasets."""
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        return _attributes(f)


def _attributes(f: h5py.File) -> dict[str, Any]:
    return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}


def read_results(path: str | Path) -> dict[str, Any]:
    """All datasets and attributes of a results file as numpy arrays and Python values."""
    out: dict[str, Any] = {}
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()])
                     if isinstance(obj, h5py.Dataset) and not name.startswith("checkpoint/") else None)
        out["attrs"] = _attributes(f)
    out["dofs"] = json.loads(out["attrs"]["dofs"])
    return out
