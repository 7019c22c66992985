"""What a campaign table shows (`hybridsim campaign-report`): IDA curves, fragility, J spread, tornado.

From the table (:mod:`.table`), the runs that completed or were stopped: the response (a column, or the largest
``peak_displacement.<dof>`` of each run), the intensity (a varied key, ``ground_motion.scale`` by
default) and the record (``ground_motion.file``) give one IDA curve per record (Vamvatsikos and
Cornell, "Incremental dynamic analysis", EESD 31(3), 2002: intensity against peak response); a limit on
the response gives the exceedances the lognormal fragility is fitted to (:mod:`.fragility`); every
``evaluation.<J>`` column its distribution; the numeric varied keys the tornado of the response.
With :class:`.measures.Measures`, the intensity (Sa) and the response (the peak interstorey drift ratio) are
measured in each run's results file; an intensity measured so differs from record to record, and the
fragility is then fitted to the records' intensities at the limit (:func:`.fragility.fit_ida`), not by stripes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.campaign.fragility import crossing, fit, fit_ida, tornado
from hybridsim.coordinator.campaign.measures import PERIOD, Measures, measured
from hybridsim.coordinator.errors import UsageError

STOPPED = "stopped"
"""the start of a stopped run's status (``stopped: <reason>``)"""
RUN_COLUMNS = ("seed", "status", "how", "wall_s", "output", "late_steps")
FIGURE_PREFIXES = ("peak_displacement.", "evaluation.")
INTENSITIES = ("ground_motion.scale", "ground_motion.pga", "scale")
"""the varied keys taken as the intensity, first found first (``scale``: a maRTHS campaign's)"""
RECORDS = ("ground_motion.file", "record")
"""the varied keys taken as the record (``record``: a maRTHS campaign's)"""


def varied(table: dict[str, np.ndarray]) -> list[str]:
    """The table's varied keys (grid, records, draws): every column that is neither run data nor a figure."""
    return [k for k in table if k not in RUN_COLUMNS and not k.startswith(FIGURE_PREFIXES)]


def response_of(table: dict[str, np.ndarray], column: str | None) -> tuple[str, np.ndarray]:
    """The response's name and values: ``column``, or the largest peak displacement of each run (m or rad)."""
    if column is not None:
        if column not in table:
            raise UsageError(f"--response: the table has no column {column!r}; one of {', '.join(sorted(table))}")
        return column, np.asarray(table[column], float)
    peaks = [k for k in table if k.startswith("peak_displacement.")]
    if not peaks:
        raise UsageError("the table has no peak_displacement column; name one with --response")
    values = np.column_stack([table[k] for k in peaks])
    largest = np.max(np.where(np.isnan(values), -np.inf, values), axis=1)  # NaN: a stopped run has no peaks
    return "peak_displacement (largest DOF)", np.where(np.isneginf(largest), np.nan, largest)


def ended(table: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The rows of the runs that completed or that a module stopped (a limit, a refused step)."""
    status = np.asarray(table["status"]).astype(str)
    keep = (status == "completed") | np.char.startswith(status, STOPPED)
    return {k: np.asarray(v)[keep] for k, v in table.items()}


def study(table: dict[str, np.ndarray], intensity: str | None = None, record: str | None = None,
          response: str | None = None, limit: float | None = None, measures: Measures | None = None,
          folder: Path = Path(".")) -> dict[str, Any]:
    """Everything the report shows, as plain numbers (JSON); ``measures`` read from the runs' files (the table's
    ``folder``) give the intensity and the response unless they are named.  A stopped run's response is beyond
    every limit (JSON null): its IDA curve flattens at the last run that went on (Vamvatsikos and Cornell's
    flatline), and the fragility counts it as exceeding; the J and tornado figures take the completed runs."""
    rows = ended(table)
    keys = varied(rows)
    by_record = False
    if measures is not None:
        rows = measured(rows, measures, folder)
        by_record = intensity is None and measures.period is not None
        intensity = intensity or (measures.intensity if measures.period is not None else None)
        response = response or (measures.response if measures.drift else None)
    intensity = intensity or next((k for k in INTENSITIES if k in keys), None)
    record = record or next((k for k in RECORDS if k in keys), None)
    stopped = np.char.startswith(rows["status"].astype(str), STOPPED)
    name, y = response_of(rows, response)
    y = np.where(stopped, np.inf, y)
    out: dict[str, Any] = {"runs": int(len(y)), "stopped": int(stopped.sum()), "response": name,
                           "intensity": intensity, "record": record, "ida": {}, "fragility": None, "j": {},
                           "tornado": []}
    if PERIOD in rows:  # the period (s) Sa was taken at: its range over the runs
        out["period_s"] = [float(np.min(rows[PERIOD])), float(np.max(rows[PERIOD]))]
    if intensity is not None:
        if intensity not in rows:
            raise UsageError(f"--intensity: the table has no column {intensity!r}; one of {', '.join(keys)}")
        groups = np.asarray(rows[record]) if record else np.full(len(y), "all runs")
        curves = _curves(np.asarray(rows[intensity], float), y, groups)
        out["ida"] = {label: [x.tolist(), [v if np.isfinite(v) else None for v in r.tolist()]]
                      for label, (x, r) in curves.items()}
        if limit is not None:
            out["fragility"] = _fragility(curves, np.asarray(rows[intensity], float), y, limit, by_record)
    for column in (k for k in rows if k.startswith("evaluation.")):
        values = np.asarray(rows[column], float)
        values = values[np.isfinite(values)]
        if values.size:
            out["j"][column[len("evaluation."):]] = values.tolist()
    numeric = {k: np.asarray(rows[k], float)[~stopped] for k in keys if np.asarray(rows[k]).dtype.kind in "fiu"
               and len(np.unique(rows[k])) > 1}
    out["tornado"] = [list(bar) for bar in tornado(numeric, y[~stopped])] if numeric else []
    return out


def _curves(im: np.ndarray, y: np.ndarray, groups: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each record's IDA curve: its intensities ascending and its responses."""
    out = {}
    for label in dict.fromkeys(groups.tolist()):
        order = np.argsort(im[groups == label])
        out[label] = (im[groups == label][order], y[groups == label][order])
    return out


def _fragility(curves: dict[str, tuple[np.ndarray, np.ndarray]], im: np.ndarray, y: np.ndarray, limit: float,
               by_record: bool) -> dict[str, Any]:
    """The fit to the records at the limit (an intensity that differs by record) or to the stripes."""
    f = fit_ida(list(curves.values()), limit) if by_record else fit(im, y > limit)
    out = {"limit": limit, "theta": f.theta, "beta": f.beta, "theta_band": f.theta_band, "resamples": f.resamples,
           "method": "records at the limit" if by_record else "stripes"}
    if by_record:
        out["at_limit"] = [crossing(x, r, limit) for x, r in curves.values()]
    return out


def write_json(result: dict[str, Any], folder: Path) -> Path:
    """``folder/campaign_report.json``."""
    import json
    path = folder / "campaign_report.json"
    path.write_text(json.dumps(result, indent=1))
    return path
