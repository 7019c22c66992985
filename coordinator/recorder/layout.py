"""The results file's layout: what a run's HDF5 file holds, created and reopened here.

Datasets grow along their first axis (one row per step)::

    /time, /step_id, /ground_acceleration, /wall_step_s         (n,)
    /displacement, /velocity, /acceleration, /restoring_force   (n, ndof)
    /modules/<name>/displacement, /modules/<name>/force          (n, module ndof)
    /integrity/...                                               [integrity]'s indicators, per step (see
                                                                 :mod:`hybridsim.coordinator.integrity.columns`)
    /modules/<name>/records/<record>                             a module's own records (rows x columns; a
                                                                 streamed one grows in blocks during the run,
                                                                 one row per committed sample of the module)
    /model/mass, /model/damping, /model/initial_stiffness       the model the integrator ran with (a sparse
                                                                 structure's as /model/<key>/coo: one row
                                                                 (row, column, value) per stored entry)
    /checkpoint/current = [slot, step, step_id]; /checkpoint/slot0, slot1: integrator/<key>, modules/<name>,
        where = [step, step_id], sha256 (32 bytes: the SHA-256 of the slot, see :func:`checkpoint_digest`)

Every dataset that holds more than a scalar carries HDF5's Fletcher32 checksum per chunk (:data:`CHECKSUMS`):
a chunk whose bytes changed fails its read, and the readers name the dataset and its rows.

Every dataset carries ``units`` (one per column, or one string) and, over DOFs, ``dofs``; every
module group its ``kind``, ``where``, ``dofs`` and ``units`` (see :func:`hybridsim.coordinator.units.labels`).

``/restoring_force`` is the integrator's committed restoring force (for alpha-OS the measured
force corrected with K_I; with condensed massless DOFs, T^T r on the DOFs kept, zero on the others);
what each module measured is in ``/modules/<name>/``.
    attrs: dofs, status ("running", "completed" or "stopped: <reason>"), completed_steps,
           stop (a stopped run: JSON {reason, step, time_s, module, cause}), summary (JSON), ...
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import scipy.sparse as sp

from hybridsim.wire.contract import Record


class ResultsFileError(Exception):
    """The results file cannot take what the run must write (its disk is full, or a write failed): one line."""


RESERVE_BYTES = 256 * 1024
"""free space kept on the results file's disk beyond the next write, for the status and summary at the end
(a maRTHS summary with its late-cause episodes is about 20 KB; the closing metadata flush of a file with a few
hundred datasets a few tens of KB)"""

CHUNK_CACHE_BYTES = 0
"""HDF5's raw-data chunk cache per dataset: none.  Every row is written once, in whole chunks but for
the last; HDF5's default (1 MiB per dataset, filled by the chunks written) grew a run's memory by
about 9 MB per 100,000 steps of a 1-DOF run (rdcc_nbytes=CHUNK_CACHE_BYTES below)"""

RESUME_ROWS = 1024
"""rows a resumed run must have room for (estimated from the file's bytes per row) before anything is written"""

CHUNK_ROWS = 256
"""rows per chunk of a per-step dataset (the unit a checksum covers)"""

CHECKSUMS = True
"""every dataset of more than a scalar carries HDF5's Fletcher32 checksum per chunk (a 4-byte sum over a chunk's
bytes, computed as the chunk is written and checked as it is read)"""


def checksummed(shape: tuple[int, ...]) -> dict[str, Any]:
    """The creation options that give a dataset of ``shape`` its per-chunk checksum (none for a scalar or an empty
    fixed array, which cannot be chunked: a checkpoint's are covered by its SHA-256)."""
    if not CHECKSUMS or not shape or 0 in shape and None not in shape:
        return {}
    return {"fletcher32": True}


def stored_matrix(key: str, matrix: Any) -> tuple[str, np.ndarray]:
    """A model matrix as the file keeps it: a dense one as it is, a sparse one as ``KEY/coo`` rows (row, column,
    value) of its stored entries (at least one, a zero)."""
    if not hasattr(matrix, "tocoo"):
        return key, np.asarray(matrix)
    coo = matrix.tocoo()
    rows = np.column_stack([coo.row, coo.col, coo.data]).astype(float)
    return f"{key}/coo", rows if rows.size else np.zeros((1, 3))


def model_matrix(stored: Mapping[str, np.ndarray], key: str, n: int) -> Any:
    """``/model/KEY`` of a results file's rows (:func:`read_rows`), dense or sparse (CSR) as it was stored."""
    if f"model/{key}" in stored:
        return stored[f"model/{key}"]
    rows = stored[f"model/{key}/coo"]
    return sp.csr_matrix((rows[:, 2], (rows[:, 0].astype(int), rows[:, 1].astype(int))), shape=(n, n))


def space_error(path: Path, needed: int) -> str | None:
    """The one-line refusal if the disk of ``path`` has less than ``needed`` + RESERVE_BYTES free, else None."""
    folder = path.parent if path.parent.exists() else Path(".")
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    if free >= needed + RESERVE_BYTES:
        return None
    return (f"results file: no space left on device ({path}: {free} bytes free on its disk, the next write needs "
            f"{needed} and {RESERVE_BYTES} are kept for closing the file; free space and resume)")


def write_error(path: Path, exc: BaseException) -> str:
    """The one-line message of a failed write or flush (HDF5 reports the errno inside its message)."""
    text = str(exc)
    found = re.search(r"errno = (\d+)", text)
    code = getattr(exc, "errno", None) or (int(found.group(1)) if found else None)
    if code == errno.ENOSPC:
        return f"results file: no space left on device ({path}: a write failed; free space and resume)"
    reason = os.strerror(code) if code else (text.strip().splitlines() or [type(exc).__name__])[0]
    return f"results file: write failed ({path}: {reason})"


def reserve_path(path: Path) -> Path:
    """The file that holds the close space of a results file while its run writes it."""
    return path.with_name(f".{path.name}.reserve")


def status_path(path: Path) -> Path:
    """The side file of a results file's final status, written beside it when its run ends and removed once the
    file holds the status itself: a failing write (a disk another process filled) cannot corrupt it; readers take
    it over the file's own ``running``."""
    return path.with_name(f"{path.name}.status.json")


def reserve(path: Path) -> None:
    """Reserve RESERVE_BYTES on the results file's disk for its close (allocated now, released just before the
    status is written); a disk without them refuses the run in one line."""
    try:
        descriptor = os.open(reserve_path(path), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        try:
            os.posix_fallocate(descriptor, 0, RESERVE_BYTES)
        finally:
            os.close(descriptor)
    except OSError as exc:
        reserve_path(path).unlink(missing_ok=True)
        raise ResultsFileError(f"results file: no space left on device ({path}: {RESERVE_BYTES} bytes cannot be "
                               f"reserved for closing the file: {exc.strerror}; free space and resume)") from None


def write_status(path: Path, status: str, rows: int, summary: Mapping[str, Any] | None,
                 stop: Mapping[str, Any] | None) -> None:
    """Release the close space, then write the run's final status beside the file (a new file renamed over the
    old: whole or not at all)."""
    reserve_path(path).unlink(missing_ok=True)
    fresh = status_path(path).with_suffix(".tmp")
    try:
        fresh.write_text(json.dumps({"status": status, "completed_steps": rows, "summary": summary, "stop": stop}))
        os.replace(fresh, status_path(path))
    except OSError:
        fresh.unlink(missing_ok=True)  # the file's own attributes are the status then


def read_status(path: Path) -> dict[str, Any] | None:
    """The side file's status, stop and summary (as the file's attributes spell them), or None."""
    try:
        side = json.loads(status_path(path).read_text())
    except (OSError, ValueError):
        return None
    out = {"status": str(side.get("status", ""))}
    for key in ("summary", "stop"):
        if side.get(key) is not None:
            out[key] = json.dumps(side[key])
    return out if out["status"] else None


def open_file(path: Path, mode: str) -> h5py.File:
    """The results file opened for writing with the recorder's settings (no chunk cache)."""
    return h5py.File(path, mode, libver="latest", rdcc_nbytes=CHUNK_CACHE_BYTES)


def create(path: Path, columns: Mapping[str, int], *, dofs: Sequence[str], attrs: Mapping[str, Any] | None = None,
           model: Mapping[str, np.ndarray] | None = None, checkpoint_state: Mapping[str, np.ndarray] | None = None,
           checkpoint_modules: Sequence[str] = (), chunk: int = CHUNK_ROWS,
           labels: Mapping[str, Mapping[str, Any]] | None = None,
           streamed: Mapping[str, Sequence[Record]] | None = None) -> None:
    """Create the results file of a run with no rows (``columns``: each per-step dataset's width, 0 for a scalar);
    refused in one line (:class:`ResultsFileError`) when its disk has no room for a chunk of rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    refusal = space_error(path, 8 * sum(max(width, 1) for width in columns.values()) * chunk)
    if refusal is not None:
        raise ResultsFileError(refusal)
    with open_file(path, "w") as f:
        f.attrs["dofs"] = json.dumps(list(dofs))
        f.attrs["status"] = "running"
        f.attrs["completed_steps"] = 0
        f.attrs["summary"] = ""
        for key, value in (attrs or {}).items():
            f.attrs[key] = value if isinstance(value, (int, float, str)) else json.dumps(value)
        for key, width in columns.items():
            shape, maxshape = ((0,), (None,)) if width == 0 else ((0, width), (None, width))
            dtype = np.int64 if key == "step_id" else np.float64
            f.create_dataset(key, shape=shape, maxshape=maxshape, dtype=dtype, chunks=(chunk,) + shape[1:],
                             **checksummed(maxshape))
        for key, matrix in (model or {}).items():
            key, matrix = stored_matrix(key, matrix)
            f.create_dataset(f"model/{key}", data=matrix, **checksummed(matrix.shape))
        for key, values in (labels or {}).items():
            (f[key] if key in f else f.create_group(key)).attrs.update(values)
        if checkpoint_state is not None:
            _create_checkpoints(f, checkpoint_state, checkpoint_modules)
        create_streamed(f, streamed or {})
    reserve(path)
    status_path(path).unlink(missing_ok=True)  # an earlier run's


def _create_checkpoints(f: h5py.File, state: Mapping[str, np.ndarray], modules: Sequence[str]) -> None:
    """The two checkpoint slots (double-buffered: ``/checkpoint/current`` points at the complete one)."""
    f.create_dataset("checkpoint/current", data=np.array([-1, -1, -1], dtype=np.int64), **checksummed((3,)))
    for slot in ("slot0", "slot1"):
        for key, value in state.items():
            zeros = np.zeros_like(np.asarray(value))
            f.create_dataset(f"checkpoint/{slot}/integrator/{key}", data=zeros, **checksummed(zeros.shape))
        for name in modules:
            f.create_dataset(f"checkpoint/{slot}/modules/{name}", shape=(0,), maxshape=(None,),
                             dtype=np.uint8, chunks=(4096,), **checksummed((None,)))
        f.create_dataset(f"checkpoint/{slot}/where", data=np.array([-1, -1], dtype=np.int64), **checksummed((2,)))
        f.create_dataset(f"checkpoint/{slot}/sha256", data=np.zeros(32, dtype=np.uint8), **checksummed((32,)))


def checkpoint_digest(step: int, step_id: int, state: Mapping[str, np.ndarray], modules: Mapping[str, bytes]) -> bytes:
    """The SHA-256 of a checkpoint: its step and step ID, every integrator array (name, dtype, shape, bytes) and
    every module's blob (name, bytes), in name order."""
    digest = hashlib.sha256(np.array([step, step_id], dtype=np.int64).tobytes())
    for key in sorted(state):
        value = np.ascontiguousarray(state[key])
        digest.update(f"{key}:{value.dtype.str}:{value.shape}".encode())
        digest.update(value.tobytes())
    for name in sorted(modules):
        digest.update(f"{name}:{len(modules[name])}".encode())
        digest.update(bytes(modules[name]))
    return digest.digest()


def reopen(path: Path, rows: int, claimed: int, streamed: Mapping[str, Sequence[Record]] | None = None,
           attrs: Mapping[str, str] | None = None) -> None:
    """Prepare a results file holding ``claimed`` rows to be continued after its row ``rows - 1`` (later rows
    are dropped); the modules' streamed records (``streamed``) are created where missing; ``attrs`` replace the
    file's attributes of those names.  Refused in one line when the disk has no room for RESUME_ROWS rows."""
    size = path.stat().st_size
    reserve(path)  # before the file is touched: a disk without the close space refuses the resume as it is
    refusal = space_error(path, int(RESUME_ROWS * size / max(claimed, 1)))  # room for a block of rows, beyond it
    if refusal is not None:
        reserve_path(path).unlink(missing_ok=True)
        raise ResultsFileError(refusal)
    status_path(path).unlink(missing_ok=True)  # the stopped run's status: the file says "running" again
    try:
        f = open_file(path, "r+")
    except OSError:  # a writer killed in SWMR mode leaves the file marked open for writing: copied anew
        refusal = space_error(path, size)
        if refusal is not None:
            reserve_path(path).unlink(missing_ok=True)
            raise ResultsFileError(refusal) from None
        from hybridsim.coordinator.recorder.verify import OPEN_S, READ_BYTES_PER_S, within  # (it reads this file)

        within(rewrite, path, OPEN_S + 2 * size / READ_BYTES_PER_S)  # a damaged file: one line, not HDF5's retries
        f = open_file(path, "r+")
    with f:
        def truncate(name: str, obj: Any) -> None:
            if per_step(name, obj):
                obj.resize(rows, axis=0)

        f.visititems(truncate)
        create_streamed(f, streamed or {})
        f.attrs.update(attrs or {})
        f.attrs["status"] = "running"
        f.attrs.pop("stop", None)
        f.attrs["completed_steps"] = rows


def create_streamed(f: h5py.File, streamed: Mapping[str, Sequence[Record]]) -> None:
    """Create the datasets of the modules' streamed records that ``f`` lacks (empty, growing; unfilled rows NaN)."""
    for module, records in streamed.items():
        for record in records:
            key = f"modules/{module}/records/{record.name}"
            if key in f:
                continue
            width = len(record.columns)
            dataset = f.create_dataset(key, shape=(0, width), maxshape=(None, width), chunks=(4096, width),
                                       dtype=np.float64, fillvalue=np.nan, **checksummed((None, width)))
            dataset.attrs.update({"units": list(record.units), "columns": list(record.columns),
                                  "description": record.description})


def store_streamed(dataset: h5py.Dataset, record: Record) -> None:
    """Rows of a streamed record at its ``first_row``; rows after them (an earlier run's, before a resume) go."""
    values = np.asarray(record.values, dtype=float).reshape(-1, dataset.shape[1])
    stop = int(record.first_row or 0) + values.shape[0]
    dataset.resize(stop, axis=0)
    dataset[stop - values.shape[0]:stop] = values


def rewrite(path: str | Path) -> None:
    """Copy a results file whose writer died (still marked open for SWMR writing) into a clean one."""
    path = Path(path)
    fresh = path.with_name(f".{path.name}.resumed")
    with h5py.File(path, "r", libver="latest", swmr=True) as old, h5py.File(fresh, "w", libver="latest") as new:
        for key, value in old.attrs.items():
            new.attrs[key] = value
        for name in old:
            old.copy(old[name], new, name=name)
    os.replace(fresh, path)


def per_step(name: str, obj: Any) -> bool:
    """Whether ``obj`` is a per-step dataset (it grows one row per step; checkpoints and records excluded)."""
    return (isinstance(obj, h5py.Dataset) and obj.maxshape[:1] == (None,) and not name.startswith("checkpoint/")
            and "/records/" not in name)
