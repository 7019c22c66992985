"""The campaign table: one row per run, one column per varied key and figure, in one HDF5 file.

Columns (1-D datasets of group ``/campaign``, equal length; strings UTF-8):
the varied dotted keys, the drawn ones (``[campaign.random]``), ``seed``, ``status``, ``how`` (made, resumed, found),
``wall_s`` (s), ``output`` (the run's results file), ``late_steps``, and the
numeric leaves of the summary's ``peak_displacement`` and ``evaluation``
tables as ``peak_displacement.<dof>`` and ``evaluation.<name>``, a list's items
numbered from 0 (the maRTHS J2 of actuator 1: ``evaluation.J.J2.0``; NaN where
a run has none).  Read it with :func:`read_table`, or with h5py into
``pandas.DataFrame({k: f["campaign"][k][()] for k in f["campaign"]})``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.campaign.runner import Row

FIGURES = ("peak_displacement", "evaluation")


def _leaves(prefix: str, value: Any) -> dict[str, float]:
    """The numeric leaves of a nested summary entry, named by their dotted path (a list's items by number)."""
    if isinstance(value, Mapping):
        return {k: v for name, sub in value.items() for k, v in _leaves(f"{prefix}.{name}", sub).items()}
    if isinstance(value, (list, tuple)):
        return {k: v for i, sub in enumerate(value) for k, v in _leaves(f"{prefix}.{i}", sub).items()}
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return {prefix: float(value)} if is_number else {}


def columns(rows: Sequence[Row]) -> dict[str, list]:
    """The table's columns, in the rows' order."""
    records = []
    for row in rows:
        record: dict[str, Any] = {**dict(row.run.values), **dict(row.run.drawn), "seed": row.run.seed, "status": row.status,
                                  "how": row.how, "wall_s": row.wall_s, "output": row.output,
                                  "late_steps": row.summary.get("late_steps", np.nan)}
        for name in FIGURES:
            record.update(_leaves(name, row.summary.get(name, {})))
        records.append(record)
    names = list(dict.fromkeys(k for record in records for k in record))
    return {name: [record.get(name, np.nan) for record in records] for name in names}


def write_table(rows: Sequence[Row], path: str | Path) -> Path:
    """Write the campaign table to ``path`` (replaced), return it."""
    with h5py.File(path, "w") as f:
        group = f.create_group("campaign")
        for name, values in columns(rows).items():
            is_text = any(isinstance(v, str) for v in values)
            group[name] = np.array([str(v) for v in values], dtype=h5py.string_dtype()) if is_text else values
    return Path(path)


def read_table(path: str | Path) -> dict[str, np.ndarray]:
    """The table's columns as arrays (strings decoded)."""
    with h5py.File(path, "r") as f:
        group = f["campaign"]
        return {name: (group[name].asstr()[()] if group[name].dtype.kind == "O" else group[name][()])
                for name in group}
