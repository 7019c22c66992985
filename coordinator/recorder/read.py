"""Reading a results file (rows, attributes, the last checkpoint) and adding to a closed one (records,
annotations).  See :mod:`hybridsim.coordinator.recorder.layout` for what it holds."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import h5py
import numpy as np

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.recorder.layout import (checkpoint_digest, checksummed, create_streamed, per_step,
                                                   read_status, store_streamed)
from hybridsim.wire.contract import Record


class DamagedResults(UsageError):
    """A results file whose bytes changed: a chunk fails its checksum, a checkpoint its SHA-256 (one line)."""


Reader = TypeVar("Reader", bound=Callable[..., Any])


def _one_line(reader: Reader) -> Reader:
    """``reader(path, ...)`` with what h5py raises for damaged metadata (a header or an attribute that fails its
    checksum: RuntimeError; a value that no longer parses: ValueError) as :class:`DamagedResults`; an OSError (not
    HDF5 at all, truncated) and a KeyError (an HDF5 file that is not a run's) are left to the caller."""
    @functools.wraps(reader)
    def read(path: str | Path, *args: Any, **kwargs: Any) -> Any:
        try:
            return reader(path, *args, **kwargs)
        except (RuntimeError, ValueError) as exc:
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise DamagedResults(f"{path}: damaged ({reason}); `hybridsim verify {path}` says what is intact") from None
    return read  # type: ignore[return-value]


@dataclass(frozen=True)
class Checkpoint:
    """The last consistent restart point of a results file."""

    step: int
    """time-step index n of the checkpointed (committed) step"""
    step_id: int
    """the module step ID committed at step n"""
    integrator: dict[str, np.ndarray]
    modules: dict[str, bytes]
    slot: int = 0
    """the slot it was read from"""
    verified: bool = False
    """its SHA-256 matched (a file made before checkpoints had one: False)"""


def read_checkpoint(path: str | Path) -> Checkpoint | None:
    """The last complete checkpoint of a results file whose SHA-256 matches, or None if it has none.

    The slot ``/checkpoint/current`` points at comes first; if its SHA-256 does not match (its bytes changed),
    the other slot, the checkpoint before, if it is complete and matches.  Neither: :class:`DamagedResults`."""
    try:
        return _read_checkpoint(path)
    except (RuntimeError, KeyError, ValueError) as exc:  # a header or a link that fails its read
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DamagedResults(f"{path}: its checkpoints are damaged ({reason}); `hybridsim verify {path}` says what "
                             "is intact") from None


def _read_checkpoint(path: str | Path) -> Checkpoint | None:
    with open_read(path) as f:
        if "checkpoint/current" not in f:
            return None
        current = checked(path, f, "checkpoint/current")
        if current.shape != (3,):
            raise DamagedResults(f"{path}: /checkpoint/current is damaged (shape {current.shape}); "
                                 f"`hybridsim verify {path}` says what is intact")
        slot, step, step_id = (int(v) for v in current)
        if slot == -1:
            return None
        rows = int(f.attrs.get("completed_steps", 0))
        if slot not in (0, 1) or not 0 <= step < rows or step_id < 0:
            raise DamagedResults(f"{path}: /checkpoint/current points nowhere (slot {slot}, step {step}, step ID "
                                 f"{step_id}, {rows} rows); `hybridsim verify {path}` says what is intact")
        found, why = _slot(path, f, slot, step, step_id)
        if found is not None:
            return found
        other = f"checkpoint/slot{1 - slot}/where"
        if other in f:
            before, before_id = (int(v) for v in f[other][()])
            earlier, _ = _slot(path, f, 1 - slot, before, before_id) if 0 <= before < step else (None, "")
            if earlier is not None:
                return earlier
        raise DamagedResults(f"{path}: the checkpoint at step {step} (slot {slot}) {why}, and no earlier one is "
                             f"intact: nothing to resume from")


def open_read(path: str | Path) -> h5py.File:
    """A results file opened for reading: as a closed file when it is one, so that a damaged one fails at once
    (HDF5 reading for SWMR retries a metadata read that fails its checksum, for minutes); for SWMR reading while
    a run writes it, or its writer died in SWMR mode (the file says it is open for writing)."""
    try:
        return h5py.File(path, "r", libver="latest", locking=False)  # a reader never keeps the writer out
    except OSError as exc:
        if "already open for write" not in str(exc):
            raise
    return h5py.File(path, "r", libver="latest", swmr=True, locking=False)


def _slot(path: str | Path, f: h5py.File, slot: int, step: int, step_id: int) -> tuple[Checkpoint | None, str]:
    """The checkpoint in ``slot`` if it is the one of ``step`` and its SHA-256 matches; else None and why not."""
    group = f[f"checkpoint/slot{slot}"]
    try:
        integrator = {k: checked(path, f, f"checkpoint/slot{slot}/integrator/{k}") for k in group["integrator"]}
        modules = ({k: checked(path, f, f"checkpoint/slot{slot}/modules/{k}").tobytes() for k in group["modules"]}
                   if "modules" in group else {})
    except DamagedResults:
        return None, "fails its checksum"
    if "sha256" not in group:
        return Checkpoint(step, step_id, integrator, modules, slot, verified=False), ""
    where = [int(v) for v in group["where"][()]]
    if where != [step, step_id]:
        return None, f"holds step {where[0]}, not step {step}"
    if group["sha256"][()].tobytes() != checkpoint_digest(step, step_id, integrator, modules):
        return None, "fails its SHA-256"
    return Checkpoint(step, step_id, integrator, modules, slot, verified=True), ""


def checked(path: str | Path, f: h5py.File, name: str, rows: slice | None = None) -> np.ndarray:
    """Dataset ``name`` of an open results file (``rows`` of it), read with its checksums; a chunk that fails is
    :class:`DamagedResults` naming the dataset and the rows of the first chunk that fails."""
    dataset = f[name]
    try:
        return dataset[()] if rows is None else dataset[rows]
    except (OSError, RuntimeError):
        raise DamagedResults(f"{path}: /{name} {_first_bad(dataset, rows)} failed its checksum (its bytes changed); "
                             f"`hybridsim verify {path}` says what is intact") from None


def intact(path: str | Path, f: h5py.File, name: str, rows: slice | None,
           skipped: list[str] | None) -> np.ndarray | None:
    """:func:`checked`; with ``skipped`` a list, a module's record that fails its checksum is None instead, the line
    naming it appended to ``skipped`` (a report or an export then gives the rest; any other dataset that fails
    still refuses the file)."""
    try:
        return checked(path, f, name, rows)
    except DamagedResults:
        if skipped is None or "/records/" not in name:
            raise
        skipped.append(f"{path}: the record /{name} is damaged ({_first_bad(f[name], rows)} fail their checksum) "
                       "and skipped; `hybridsim verify` says what is intact")
        return None


def _first_bad(dataset: h5py.Dataset, rows: slice | None) -> str:
    """Where the first chunk of ``dataset`` (within ``rows``) that fails its read lies, in words."""
    if not dataset.chunks or not dataset.shape:
        return ""
    start, stop, _ = (rows or slice(None)).indices(dataset.shape[0])
    step = dataset.chunks[0]
    for first in range(start - start % step, stop, step):
        try:
            dataset[first:first + step]
        except OSError:
            return f"rows {first}-{min(first + step, dataset.shape[0]) - 1}"
    return ""


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
                values = np.asarray(record.values, dtype=float)
                dataset = f.create_dataset(key, data=values, **checksummed(values.shape))
                dataset.attrs.update({"units": list(record.units), "columns": list(record.columns),
                                      "description": record.description})
        for name, error in errors.items():
            f.require_group(f"modules/{name}").attrs["records_error"] = error


def annotate(path: str | Path, key: str, value: Any) -> None:
    """Add an attribute (JSON for anything but a string) to a closed results file."""
    with h5py.File(path, "r+", libver="latest") as f:
        f.attrs[key] = value if isinstance(value, str) else json.dumps(value)


@_one_line
def read_attributes(path: str | Path) -> dict[str, Any]:
    """The attributes of a results file (experiment, status, summary, ...) without its datasets."""
    with open_read(path) as f:
        return _attributes(f)


def _attributes(f: h5py.File, strict: bool = True) -> dict[str, Any]:
    """The file's attributes; a run whose file still says ``running`` but whose status was written beside it
    (its last writes failed: a full disk) takes the status, stop and summary from there.  ``strict``: a text
    attribute whose bytes are no longer UTF-8 (bit rot; h5py hands it on with surrogates) is refused in one line."""
    attrs = {k: (v.decode(errors="surrogateescape") if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
    damaged = not_text(attrs)
    if strict and damaged:
        raise DamagedResults(f"{f.filename}: damaged (attribute {damaged[0]!r} is not UTF-8 text: its bytes changed); "
                             f"`hybridsim verify {f.filename}` says what is intact")
    if attrs.get("status") == "running":
        attrs.update(read_status(Path(f.filename)) or {})
    return attrs


def not_text(attrs: dict[str, Any]) -> list[str]:
    """The names of the text attributes in ``attrs`` that are not UTF-8 (their bytes changed)."""
    return [key for key, value in attrs.items() if isinstance(value, str) and _surrogates(value)]


def _surrogates(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


@_one_line
def read_results(path: str | Path, skipped: list[str] | None = None) -> dict[str, Any]:
    """All datasets and attributes of a results file as numpy arrays and Python values.

    Per-step datasets hold the ``completed_steps`` rows the file claims: rows a failed write left
    beyond them are not returned.  ``skipped``: a damaged module record is left out and named there (:func:`intact`).
    """
    out: dict[str, Any] = {}
    with open_read(path) as f:
        rows = int(f.attrs.get("completed_steps", 0))

        def read(name: str, obj: Any) -> None:
            if isinstance(obj, h5py.Dataset) and not name.startswith("checkpoint/"):
                values = intact(path, f, name, slice(0, rows) if per_step(name, obj) else None, skipped)
                if values is not None:
                    out[name] = values

        _visit(path, f, read)
        out["attrs"] = _attributes(f)
    out["dofs"] = json.loads(out["attrs"]["dofs"])
    return out


@_one_line
def read_rows(path: str | Path, first: int, stop: int) -> dict[str, np.ndarray]:
    """Rows ``first .. stop-1`` of every per-step dataset, and the ``model/`` matrices, of a results file."""
    out: dict[str, np.ndarray] = {}
    with open_read(path) as f:
        def read(name: str, obj: Any) -> None:
            if per_step(name, obj):
                out[name] = checked(path, f, name, slice(first, stop))
            elif isinstance(obj, h5py.Dataset) and name.startswith("model/"):
                out[name] = checked(path, f, name)

        _visit(path, f, read)
    return out


def _visit(path: str | Path, f: h5py.File, read: Callable[[str, Any], None]) -> None:
    """``f.visititems(read)``; metadata that fails its checksum is :class:`DamagedResults` (one line)."""
    try:
        f.visititems(read)
    except (RuntimeError, KeyError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DamagedResults(f"{path}: its layout is damaged ({reason}); `hybridsim verify {path}` says what is "
                             "intact") from None


def scan_rows(path: str | Path, stop: int, observe: Callable[[int, Mapping[str, np.ndarray]], None],
              block: int = 65536) -> None:
    """Call ``observe(first_row, rows)`` over rows 0 .. stop-1 of a results file, ``block`` rows at a time."""
    for first in range(0, stop, block):
        observe(first, read_rows(path, first, min(first + block, stop)))
