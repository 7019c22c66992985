"""Exporting a results file for MATLAB (``.mat``) and spreadsheets (CSV), with its units, status, summary and J.

``export_results(results, "mat" | "csv", out_dir)`` writes every group:

mat   one ``<stem>.mat``: each dataset under its path with ``/`` as ``_`` (``displacement``,
      ``modules_lab_force``, ``modules_lab_records_commands``; one row per step, so ``time`` and the other
      scalars per step are N x 1 like ``displacement``'s N x ndof), ``units`` and ``columns`` (structs by the
      same names: the unit and the DOF or column name of every column), ``dofs`` (the structure's
      DOFs), ``status``, ``stop`` (a stopped run), ``summary`` (JSON text), ``J`` (a struct, when the
      run was evaluated), ``experiment`` (the experiment file's text) and ``skipped`` (damaged records left out)
csv   ``<stem>.response.csv`` (time, ground acceleration and the global response), one
      ``<stem>.module.<name>.csv`` per module (time, what it measured), one
      ``<stem>.module.<name>.<record>.csv`` per module record, with [integrity] ``<stem>.integrity.csv`` (the
      energy balance and energy error) and one ``<stem>.integrity.<name>.csv`` per watched module (its energy
      error, tracking indicator and delay per DOF), and ``<stem>.run.json`` (status, stop,
      summary, J, units, skipped); every CSV header names its column and unit as ``quantity:dof [unit]``
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import h5py
import numpy as np
import scipy.io

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.integrity.columns import BALANCE, ENERGY_ERROR, INDICATORS, site_key
from hybridsim.coordinator.recorder.read import _attributes, intact, open_read

Format = Literal["mat", "csv"]
RESPONSE = ("displacement", "velocity", "acceleration", "restoring_force")


@dataclass(frozen=True)
class Column:
    """One dataset of a results file with what names its columns."""

    values: np.ndarray
    units: list[str]
    """one unit per column (a scalar per step: one)"""
    columns: list[str]
    """the DOF or column name of every column (a scalar per step: the dataset's name)"""


def read_labelled(path: str | Path, skipped: list[str] | None = None) -> tuple[dict[str, Column], dict[str, Any]]:
    """Every dataset (but checkpoints) with its units and column names, and the file's attributes (``skipped``: a
    damaged module record is left out and named there, hybridsim.coordinator.recorder.read.intact)."""
    datasets: dict[str, Column] = {}
    if not Path(path).is_file():
        raise UsageError(f"{path}: no such file (give the results file of a run, e.g. results/NAME.h5)")

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset) and not name.startswith("checkpoint/"):
            values = intact(path, f, name, None, skipped)  # a chunk that fails its checksum: one line naming it
            if values is None:
                return
            width = values.shape[1] if values.ndim == 2 else 1
            datasets[name] = Column(values, _strings(obj.attrs.get("units", ""), width),
                                    _strings(obj.attrs.get("dofs", obj.attrs.get("columns", name.rsplit("/", 1)[-1])),
                                             width))
    try:
        with open_read(path) as f:  # a closed file as such: a damaged one fails at once, without SWMR's retries
            f.visititems(visit)
            attrs = _attributes(f)  # (a text attribute whose bytes changed: one line)
    except (OSError, RuntimeError):
        raise UsageError(f"{path} is not a hybridsim results file (HDF5 written by hybridsim run)") from None
    return datasets, attrs


def _strings(value: Any, width: int) -> list[str]:
    """An attribute as one string per column (a single string repeated)."""
    if isinstance(value, (str, bytes)):
        text = value.decode() if isinstance(value, bytes) else value
        return [text] * width
    return [v.decode() if isinstance(v, bytes) else str(v) for v in value]


def export_results(results: str | Path, to: Format, out_dir: str | Path | None = None,
                   skipped: list[str] | None = None) -> list[Path]:
    """Write ``results`` as MATLAB or CSV files into ``out_dir`` (default: beside it); the paths written.
    ``skipped``: a damaged module record is left out and named there and in the files (``skipped``)."""
    results = Path(results)
    out = Path(out_dir) if out_dir is not None else results.parent
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out: cannot create {out}: {exc.strerror}") from None
    datasets, attrs = read_labelled(results, skipped)
    attrs = {**attrs, "skipped": json.dumps(skipped)} if skipped else attrs
    if to == "mat":
        return [_write_mat(datasets, attrs, out / f"{results.stem}.mat")]
    if to == "csv":
        return _write_csvs(datasets, attrs, out, results.stem)
    raise UsageError(f"--to: export to mat or csv, not {to!r}")


RESPONSE_COLUMNS = ["stage", "ground_acceleration", "ground_components", *RESPONSE]
"""the response table's columns after time (a test program's stage, several excitation components: when present)"""


def export(results: str | Path, target: str | Path) -> Path:
    """One file by ``target``'s suffix: ``.mat`` (everything, as export_results) or ``.csv`` (the global response)."""
    target = Path(target)
    datasets, attrs = read_labelled(results)
    if target.suffix == ".mat":
        return _write_mat(datasets, attrs, target)
    if target.suffix == ".csv":
        return _write_table(target, datasets, RESPONSE_COLUMNS)
    raise UsageError(f"export target must end in .mat or .csv, got {target.name!r}")


# -- MATLAB ---------------------------------------------------------------------------------------------------
def _field(name: str) -> str:
    """A valid MATLAB field name for ``name`` (letters, digits, underscores; starts with a letter)."""
    text = re.sub(r"\W", "_", name)
    return text if re.match(r"[A-Za-z]", text) else f"x_{text}"


def _struct(value: Any) -> Any:
    """JSON-like values as MATLAB structs (field names made valid), lists of numbers as arrays."""
    if isinstance(value, Mapping):
        return {_field(k): _struct(v) for k, v in value.items()}
    if isinstance(value, list) and all(isinstance(v, (int, float)) for v in value):
        return np.asarray(value, dtype=float)
    if isinstance(value, list):
        return np.array([_struct(v) for v in value], dtype=object)
    return "" if value is None else value


def _write_mat(datasets: Mapping[str, Column], attrs: Mapping[str, Any], target: Path) -> Path:
    # a vector is a column (N x 1), as every dataset over DOFs is N x ndof (MATLAB would make it 1 x N)
    flat: dict[str, Any] = {_field(k): c.values[:, None] if c.values.ndim == 1 else c.values for k, c in datasets.items()}
    flat["units"] = {_field(k): np.array(c.units, dtype=object) for k, c in datasets.items()}
    flat["columns"] = {_field(k): np.array(c.columns, dtype=object) for k, c in datasets.items()}
    flat["dofs"] = np.array(json.loads(attrs.get("dofs", "[]")), dtype=object)
    flat["status"] = str(attrs.get("status", ""))
    flat["summary"] = str(attrs.get("summary", ""))
    flat["experiment"] = str(attrs.get("source", ""))
    for key in ("stop", "J", "evaluation", "skipped"):
        if attrs.get(key):
            flat[key] = _struct(json.loads(attrs[key]))
    scipy.io.savemat(target, flat, long_field_names=True)
    return target


# -- CSV ------------------------------------------------------------------------------------------------------
def _write_table(target: Path, datasets: Mapping[str, Column], keys: Sequence[str], *, time: bool = True) -> Path:
    """A CSV of the datasets ``keys`` side by side, headed ``quantity:column [unit]`` (time first)."""
    parts, header = [], []
    for key in (["time"] if time else []) + [k for k in keys if k in datasets]:
        column = datasets[key]
        quantity = key.rsplit("/", 1)[-1]
        parts.append(column.values.reshape(column.values.shape[0], -1))
        header += [f"{quantity} [{u}]" if column.values.ndim == 1 else f"{quantity}:{c} [{u}]"
                   for c, u in zip(column.columns, column.units)]
    rows = min(p.shape[0] for p in parts)
    np.savetxt(target, np.column_stack([p[:rows] for p in parts]), delimiter=",", header=",".join(header),
               comments="", fmt="%.17g")
    return target


def _write_csvs(datasets: Mapping[str, Column], attrs: Mapping[str, Any], out: Path, stem: str) -> list[Path]:
    written = [_write_table(out / f"{stem}.response.csv", datasets, RESPONSE_COLUMNS)]
    modules = sorted({k.split("/")[1] for k in datasets if k.startswith("modules/")})
    for name in modules:
        prefix = f"modules/{name}/"
        written.append(_write_table(out / f"{stem}.module.{name}.csv", datasets,
                                    [f"{prefix}displacement", f"{prefix}force"]))
        for key in sorted(k for k in datasets if k.startswith(f"{prefix}records/")):
            record = key.removeprefix(f"{prefix}records/").replace("/", ".")
            written.append(_write_table(out / f"{stem}.module.{name}.{record}.csv", datasets, [key], time=False))
    if BALANCE in datasets:  # [integrity]'s indicators: the structure's, then each watched module's
        written.append(_write_table(out / f"{stem}.integrity.csv", datasets, [BALANCE, ENERGY_ERROR]))
        for name in sorted({k.split("/")[2] for k in datasets if k.startswith("integrity/modules/")}):
            written.append(_write_table(out / f"{stem}.integrity.{name}.csv", datasets,
                                        [site_key(name, indicator) for indicator in INDICATORS]))
    run = {key: json.loads(attrs[key]) for key in ("stop", "summary", "J", "evaluation", "skipped")
           if attrs.get(key)}
    run = {"status": attrs.get("status", ""), "experiment": attrs.get("experiment", ""), **run,
           "units": {k: c.units for k, c in datasets.items()}, "columns": {k: c.columns for k, c in datasets.items()}}
    target = out / f"{stem}.run.json"
    target.write_text(json.dumps(run, indent=1) + "\n")
    return [*written, target]
