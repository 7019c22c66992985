"""Streaming HDF5 recorder: every completed step reaches the file, even when a run stops early.

Datasets grow along their first axis (one row per step) and are flushed
in blocks of steps and whenever the run ends, however it ends.  The
file is written in SWMR mode, so it stays readable while the test runs and
after a crash at any flush point.  Layout::

    /time, /step_id, /ground_acceleration, /wall_step_s         (n,)
    /displacement, /velocity, /acceleration, /restoring_force   (n, ndof)
    /modules/<name>/displacement, /modules/<name>/force          (n, module ndof)
    /modules/<name>/records/<record>                             a module's own records (rows x columns; a
                                                                 streamed one grows in blocks during the run,
                                                                 one row per committed sample of the module)

Every dataset carries ``units`` (one per column, or one string) and, over DOFs, ``dofs``; every
module group its ``kind``, ``where``, ``dofs`` and ``units`` (see :func:`hybridsim.coordinator.units.labels`).

``/restoring_force`` is the integrator's committed restoring force (for alpha-OS the measured
force corrected with K_I; with condensed massless DOFs, T^T r on the DOFs kept, zero on the others);
what each module measured is in ``/modules/<name>/``.
    attrs: dofs, status ("running", "completed" or "stopped: <reason>"), completed_steps,
           stop (a stopped run: JSON {reason, step, time_s, module, cause}), ...
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import queue
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.lateness import Intervals
from hybridsim.coordinator.pacing import Slack
from hybridsim.coordinator.window import RowWindow
from hybridsim.wire.contract import Record


class ResultsFileError(Exception):
    """The results file cannot take what the run must write (its disk is full, or a write failed): one line."""


RESERVE_BYTES = 256 * 1024
"""free space kept on the results file's disk beyond the next write, for the status and summary at the end"""

CHUNK_CACHE_BYTES = 0
"""HDF5's raw-data chunk cache per dataset: none.  Every row is written once, in whole chunks but for
the last; HDF5's default (1 MiB per dataset, filled by the chunks written) grew a run's memory by
about 9 MB per 100,000 steps of a 1-DOF run (rdcc_nbytes=CHUNK_CACHE_BYTES below)"""

RESUME_ROWS = 1024
"""rows a resumed run must have room for (estimated from the file's bytes per row) before anything is written"""

QUEUE_WRITES = 4
"""blocks of rows and checkpoints that may wait for the writer thread before the step loop waits for it"""


def _space_error(path: Path, needed: int) -> str | None:
    """The one-line refusal if the disk of ``path`` has less than ``needed`` + RESERVE_BYTES free, else None."""
    folder = path.parent if path.parent.exists() else Path(".")
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    if free >= needed + RESERVE_BYTES:
        return None
    return (f"results file: no space left on device ({path}: {free} bytes free on its disk, the next write needs "
            f"{needed} and {RESERVE_BYTES} are kept for closing the file; free space and resume)")


def _write_error(path: Path, exc: BaseException) -> str:
    """The one-line message of a failed write or flush (HDF5 reports the errno inside its message)."""
    text = str(exc)
    found = re.search(r"errno = (\d+)", text)
    code = getattr(exc, "errno", None) or (int(found.group(1)) if found else None)
    if code == errno.ENOSPC:
        return f"results file: no space left on device ({path}: a write failed; free space and resume)"
    reason = os.strerror(code) if code else (text.strip().splitlines() or [type(exc).__name__])[0]
    return f"results file: write failed ({path}: {reason})"


class Recorder:
    """Append-only writer of one run's response history, its model and its checkpoints.

    ``columns`` maps each dataset name to its width (0 for a scalar per step).  The file is
    created by the constructor; after :meth:`start`, rows and checkpoints are written by a writer
    thread, off the step loop: :meth:`submit` queues the rows the window holds up to a row count,
    :meth:`checkpoint` queues a restart point.  The queue holds at most :data:`QUEUE_WRITES` writes;
    beyond that the caller waits (it never drops a row).

    Guarantees: ``completed_steps`` (and :attr:`rows`) move only after the rows are written and
    flushed; a write or flush error, or a disk without room for the next write, sets
    :attr:`failure` to one line (``results file: no space left on device (...)``) and the writer
    writes nothing more.  When the disk was found full before writing, the file is intact and
    :meth:`close` still records the status; when the operating system refused a write, the file is
    abandoned: its descriptor is pointed at /dev/null so that closing it cannot write into it again,
    and what it holds is what was flushed before (its status stays ``running``).

    Checkpoints are double-buffered (``/checkpoint/slot0``, ``slot1``): a new one is written into
    the slot not in use, flushed, and only then does ``/checkpoint/current`` = [slot, step, step_id]
    point to it, so a crash at any moment leaves the last complete checkpoint readable.
    """

    def __init__(self, path: str | Path, columns: Mapping[str, int], *, dofs: Sequence[str],
                 attrs: Mapping[str, Any] | None = None, model: Mapping[str, np.ndarray] | None = None,
                 checkpoint_state: Mapping[str, np.ndarray] | None = None, checkpoint_modules: Sequence[str] = (),
                 chunk: int = 256, labels: Mapping[str, Mapping[str, Any]] | None = None,
                 streamed: Mapping[str, Sequence[Record]] | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._columns = dict(columns)
        refusal = _space_error(self.path, self._row_bytes * chunk)
        if refusal is not None:
            raise ResultsFileError(refusal)
        f = self._file = h5py.File(self.path, "w", libver="latest", rdcc_nbytes=CHUNK_CACHE_BYTES)
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
        _create_streamed(f, streamed or {})
        f.swmr_mode = True
        self._init_writer(0)

    @classmethod
    def reopen(cls, path: str | Path, rows: int, streamed: Mapping[str, Sequence[Record]] | None = None,
               attrs: Mapping[str, str] | None = None) -> "Recorder":
        """Continue writing a results file after its row ``rows - 1`` (later rows are dropped); the modules'
        streamed records (``streamed``: their names and columns) are continued where the modules resume;
        ``attrs`` replace the file's attributes of those names (the experiment as resumed)."""
        self = cls.__new__(cls)
        self.path = Path(path)
        size = self.path.stat().st_size
        claimed = int(read_attributes(self.path).get("completed_steps", 0))
        refusal = _space_error(self.path, int(RESUME_ROWS * size / max(claimed, 1)))  # room for a block of rows
        if refusal is not None:
            raise ResultsFileError(refusal)
        try:
            self._file = h5py.File(self.path, "r+", libver="latest", rdcc_nbytes=CHUNK_CACHE_BYTES)
        except OSError:  # a writer killed in SWMR mode leaves the file marked open for writing: copied anew
            refusal = _space_error(self.path, size)
            if refusal is not None:
                raise ResultsFileError(refusal) from None
            _rewrite(self.path)
            self._file = h5py.File(self.path, "r+", libver="latest", rdcc_nbytes=CHUNK_CACHE_BYTES)
        self._columns = {}

        def truncate(name: str, obj: Any) -> None:
            if _per_step(name, obj):
                obj.resize(rows, axis=0)
                self._columns[name] = obj.shape[1] if obj.ndim == 2 else 0

        self._file.visititems(truncate)
        _create_streamed(self._file, streamed or {})
        self._file.attrs.update(attrs or {})
        self._file.attrs["status"] = "running"
        self._file.attrs.pop("stop", None)
        self._file.attrs["completed_steps"] = rows
        self._file.swmr_mode = True
        self._init_writer(rows)
        return self

    def _init_writer(self, rows: int) -> None:
        self._descriptor = self._file.id.get_vfd_handle()
        """the file's descriptor, taken now: after a failed write HDF5 may not answer for it"""
        self._datasets: dict[str, h5py.Dataset] = {}
        """every dataset the writer touches, kept open until the file closes: closing one flushes its
        metadata, which must not happen in the middle of a failed write"""
        self.rows = rows
        """rows on disk (the file's completed_steps)"""
        self.failure: str | None = None
        self._abandoned = False
        self._submitted = rows
        self._queue: queue.Queue[tuple[Any, ...] | None] = queue.Queue(maxsize=QUEUE_WRITES)
        self._written = threading.Condition()
        self._thread: threading.Thread | None = None
        self._slack: Slack | None = None
        self.activity = Intervals()
        """when the writer thread wrote (what real-time lateness is compared with)"""

    @property
    def _row_bytes(self) -> int:
        return 8 * sum(max(width, 1) for width in self._columns.values())

    # -- the step loop's side ----------------------------------------------------------------------
    def start(self, window: RowWindow, observe: Callable[[int, Mapping[str, np.ndarray]], None] | None = None,
              slack: Slack | None = None) -> None:
        """Start the writer thread over ``window``; ``observe(first_row, rows)`` sees every block it writes;
        with ``slack`` (a real-time run), it works in slices while the step loop sleeps."""
        self._window, self._observe, self._slack = window, observe, slack
        self._thread = threading.Thread(target=self._run, name=f"results writer {self.path.name}", daemon=True)
        self._thread.start()

    def submit(self, rows: int) -> None:
        """Queue the window's rows up to ``rows - 1`` for writing (waits while the queue is full)."""
        if rows > self._submitted and self.failure is None:
            self._submitted = rows
            self._put(("rows", rows))

    def checkpoint(self, step: int, step_id: int, state: Mapping[str, np.ndarray], modules: Mapping[str, bytes]) -> None:
        """Queue a consistent restart point after ``step`` (its rows are queued first)."""
        self.submit(step + 1)
        if self.failure is None:
            self._put(("checkpoint", step, step_id, {k: np.array(v, copy=True) for k, v in state.items()},
                       dict(modules)))

    def records(self, module: str, records: Sequence[Record]) -> None:
        """Queue a block of ``module``'s streamed records (written at their ``first_row``) after the rows queued."""
        if self.failure is None and records:
            self._put(("records", module, records))

    def wait_written(self, rows: int) -> None:
        """Block until ``rows`` rows are on disk or the writer failed."""
        with self._waiting(), self._written:
            self._written.wait_for(lambda: self.rows >= rows or self.failure is not None)

    def _put(self, item: tuple[Any, ...]) -> None:
        try:
            self._queue.put_nowait(item)
            return
        except queue.Full:
            pass
        with self._waiting():
            while self.failure is None:
                try:
                    self._queue.put(item, timeout=0.1)
                    return
                except queue.Full:
                    continue

    def _waiting(self) -> contextlib.AbstractContextManager[None]:
        """While the step loop waits for the writer, the writer need not wait for the loop's slack."""
        return self._slack.open() if self._slack is not None else contextlib.nullcontext()

    def _slice(self) -> None:
        """(writer) Wait for the loop's slack before a slice of work, in a real-time run."""
        if self._slack is not None:
            self.activity.end()  # waiting is not writing
            self._slack.wait()
            self.activity.begin()

    def close(self, status: str, summary: Mapping[str, Any] | None = None,
              stop: Mapping[str, Any] | None = None) -> None:
        """Write what is queued, then mark the run ``completed`` or ``stopped: reason`` and close.

        ``stop`` (attribute "stop", JSON) says why and where a stopped run stopped: reason, step, time_s,
        module.  After a failure nothing more is written: a file found full keeps its rows and gets the
        status (the reserve is there for it); an abandoned file is only released.
        """
        if self._thread is not None:
            with self._waiting():
                self._put_final()
                self._thread.join()
            self._thread = None
        if not self._file.id.valid:
            return
        if self._abandoned:
            return
        try:
            self._file.attrs["status"] = status
            if summary is not None:
                self._file.attrs["summary"] = json.dumps(summary)
            if stop is not None:
                self._file.attrs["stop"] = json.dumps(stop)
            self._file.close()
        except Exception as exc:  # noqa: BLE001 - HDF5 reports write errors as several types
            self._abandon(exc)

    def _put_final(self) -> None:
        while True:
            try:
                self._queue.put(None, timeout=0.1)
                return
            except queue.Full:
                if not self._thread.is_alive():  # type: ignore[union-attr]
                    return

    # -- the writer thread -------------------------------------------------------------------------
    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            if self.failure is not None:
                continue
            self.activity.begin()
            try:
                if item[0] == "rows":
                    self._write_rows(item[1])
                elif item[0] == "records":
                    self._write_records(item[1], item[2])
                else:
                    self._write_checkpoint(*item[1:])
            except Exception as exc:  # noqa: BLE001 - HDF5 reports write errors as several types
                try:
                    self._abandon(exc)
                except BaseException:  # the step loop must never wait for a writer that is gone
                    self._fail(_write_error(self.path, exc))
                    raise
            finally:
                self.activity.end()

    def _write_rows(self, stop: int) -> None:
        start = self.rows
        if stop <= start:
            return
        if self._refuse(self._row_bytes * (stop - start)):
            return
        window = self._window
        for key, values in window.arrays.items():
            self._slice()
            dataset = self._dataset(key)
            dataset.resize(stop, axis=0)
            for row, slot, count in window.segments(start, stop):
                dataset[row:row + count] = values[slot:slot + count]
        self._slice()
        self._file.flush()
        self._slice()
        self._file.attrs["completed_steps"] = stop
        self._file.flush()
        if self._observe is not None:
            self._slice()
            for row, slot, count in window.segments(start, stop):
                self._observe(row, {k: v[slot:slot + count] for k, v in window.arrays.items()})
        with self._written:
            self.rows = stop
            self._written.notify_all()

    def _write_checkpoint(self, step: int, step_id: int, state: Mapping[str, np.ndarray],
                          modules: Mapping[str, bytes]) -> None:
        if self._refuse(2 * sum(len(blob) for blob in modules.values()) + 8 * sum(v.size for v in state.values())):
            return
        current = self._dataset("checkpoint/current")
        slot = "slot1" if current[0] == 0 else "slot0"
        self._slice()
        for key, value in state.items():
            self._dataset(f"checkpoint/{slot}/integrator/{key}")[...] = value
        for name, blob in modules.items():
            self._slice()
            dataset = self._dataset(f"checkpoint/{slot}/modules/{name}")
            dataset.resize(len(blob), axis=0)
            dataset[:] = np.frombuffer(blob, dtype=np.uint8)
        self._slice()
        self._file.flush()
        self._slice()
        current[...] = [int(slot[-1]), step, step_id]
        self._file.flush()

    def _write_records(self, module: str, records: Sequence[Record]) -> None:
        if self._refuse(sum(8 * np.size(r.values) for r in records)):
            return
        for record in records:
            self._slice()
            _store_streamed(self._dataset(f"modules/{module}/records/{record.name}"), record)
        self._slice()
        self._file.flush()

    def _dataset(self, name: str) -> h5py.Dataset:
        if name not in self._datasets:
            self._datasets[name] = self._file[name]
        return self._datasets[name]

    def _refuse(self, needed: int) -> bool:
        """Stop writing (with the one-line failure) if the disk has no room for ``needed`` bytes and the reserve."""
        refusal = _space_error(self.path, needed)
        if refusal is not None:
            self._fail(refusal)
        return refusal is not None

    def _fail(self, message: str) -> None:
        with self._written:
            self.failure = message
            self._written.notify_all()

    def _abandon(self, exc: BaseException) -> None:
        """A write failed: record the line, point the file's descriptor at /dev/null, release the file."""
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, self._descriptor)
        os.close(null)
        self._abandoned = True
        self._fail(_write_error(self.path, exc))
        with contextlib.suppress(Exception):
            self._file.close()


def _create_streamed(f: h5py.File, streamed: Mapping[str, Sequence[Record]]) -> None:
    """Create the datasets of the modules' streamed records that ``f`` lacks (empty, growing; unfilled rows NaN)."""
    for module, records in streamed.items():
        for record in records:
            key = f"modules/{module}/records/{record.name}"
            if key in f:
                continue
            width = len(record.columns)
            dataset = f.create_dataset(key, shape=(0, width), maxshape=(None, width), chunks=(4096, width),
                                       dtype=np.float64, fillvalue=np.nan)
            dataset.attrs.update({"units": list(record.units), "columns": list(record.columns),
                                  "description": record.description})


def _store_streamed(dataset: h5py.Dataset, record: Record) -> None:
    """Rows of a streamed record at its ``first_row``; rows after them (an earlier run's, before a resume) go."""
    values = np.asarray(record.values, dtype=float).reshape(-1, dataset.shape[1])
    stop = int(record.first_row or 0) + values.shape[0]
    dataset.resize(stop, axis=0)
    dataset[stop - values.shape[0]:stop] = values


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
            _create_streamed(f, {name: [r for r in module_records if r.first_row is not None]})
            for record in module_records:
                key = f"modules/{name}/records/{record.name}"
                if record.first_row is not None:
                    _store_streamed(f[key], record)
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


def _per_step(name: str, obj: Any) -> bool:
    """Whether ``obj`` is a per-step dataset (it grows one row per step; checkpoints and records excluded)."""
    return (isinstance(obj, h5py.Dataset) and obj.maxshape[:1] == (None,) and not name.startswith("checkpoint/")
            and "/records/" not in name)


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
                out[name] = obj[:rows] if _per_step(name, obj) else obj[()]

        f.visititems(read)
        out["attrs"] = _attributes(f)
    out["dofs"] = json.loads(out["attrs"]["dofs"])
    return out


def read_rows(path: str | Path, first: int, stop: int) -> dict[str, np.ndarray]:
    """Rows ``first .. stop-1`` of every per-step dataset, and the ``model/`` matrices, of a results file."""
    out: dict[str, np.ndarray] = {}
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        def read(name: str, obj: Any) -> None:
            if _per_step(name, obj):
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
