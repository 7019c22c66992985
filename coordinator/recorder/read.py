"""Reading a results file (rows, attributes, the last checkpoint) and adding to a closed one (records,
annotations).  See :mod:`hybridsim.coordinator.recorder.layout` for what it holds."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.recorder.layout import create_streamed, per_step, store_streamed
from hybridsim.wire.contract import Record


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
            create_streamed(f, {name: [r for r in module_records if r.first_row is not None]})
            for record in module_records:
                key = f"modules/{name}/records/{record.name}"
                if record.first_row is not None:
                    store_streamed(f[key], record)
                    continue
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
    """All datasets and attributes of a results file as numpy arrays and Python values.

    Per-step datasets hold the ``completed_steps`` rows the file claims: rows a failed write left
    beyond them are not returned.
    """
    out: dict[str, Any] = {}
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        rows = int(f.attrs.get("completed_steps", 0))

        def read(name: str, obj: Any) -> None:
            if isinstance(obj, h5py.Dataset) and not name.startswith("checkpoint/"):
                out[name] = obj[:rows] if per_step(name, obj) else obj[()]

        f.visititems(read)
        out["attrs"] = _attributes(f)
    out["dofs"] = json.loads(out["attrs"]["dofs"])
    return out


def read_rows(path: str | Path, first: int, stop: int) -> dict[str, np.ndarray]:
    """Rows ``first .. stop-1`` of every per-step dataset, and the ``model/`` matrices, of a results file."""
    out: dict[str, np.ndarray] = {}
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        def read(name: str, obj: Any) -> None:
            if per_step(name, obj):
                out[name] = obj[first:stop]
            elif isinstance(obj, h5py.Dataset) and name.startswith("model/"):
                out[name] = obj[()]

        f.visititems(read)
    return out


def scan_rows(path: str | Path, stop: int, observe: Callable[[int, Mapping[str, np.ndarray]], None],
              block: int = 65536) -> None:
    """Call ``observe(first_row, rows)`` over rows 0 .. stop-1 of a results file, ``block`` rows at a time."""
    for first in range(0, stop, block):
        observe(first, read_rows(path, first, min(first + block, stop)))
