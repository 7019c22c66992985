"""`hybridsim report RESULTS.h5`: the monitor's plots of a finished run as one self-contained HTML file.

The frames are built from the results file exactly as the live monitor builds
them from the running test (:class:`hybridsim.coordinator.monitor.frames.FrameBuilder`),
so the report shows the same plots; beside them the J table when the file
carries one (attribute ``J``), the run's status, timing and configuration.  A run that did not
complete (interrupted, aborted, refused by a limit, a site that failed) is reported as far as it
went, with why and where it stopped at the top of the page (attribute ``stop``).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.integrity.report import integrity_card
from hybridsim.coordinator.monitor.frames import FrameBuilder, merged_chunks, run_info
from hybridsim.coordinator.monitor.jsonview import frame_json, info_json
from hybridsim.coordinator.monitor.layout import MAX_POINTS, RunLayout, layout_of_experiment, run_layout
from hybridsim.coordinator.monitor.page import render_page
from hybridsim.coordinator.pacing import format_site_clock
from hybridsim.coordinator.recorder import read_results


def write_report(results: str | Path, out: str | Path | None = None, *, max_points: int = MAX_POINTS,
                 skipped: list[str] | None = None) -> Path:
    """Write the report of ``results`` to ``out`` (default: beside it, .html); the path written (``skipped``: a
    damaged module record is left out, named there and at the top of the report)."""
    results = Path(results)
    out = Path(out) if out is not None else results.with_suffix(".html")
    out.write_text(report_html(results, max_points=max_points, skipped=skipped), encoding="utf-8")
    return out


def report_html(results: Path, *, max_points: int = MAX_POINTS, skipped: list[str] | None = None) -> str:
    if not results.is_file():
        raise UsageError(f"{results}: no such file (give the results file of a run, e.g. results/NAME.h5)")
    try:
        data = read_results(results, skipped)
    except (OSError, KeyError):
        raise UsageError(f"{results} is not a hybridsim results file (HDF5 written by hybridsim run)") from None
    attrs = data["attrs"]
    rows = int(attrs.get("completed_steps", 0))
    if rows < 1 or "time" not in data:
        raise UsageError(f"{results} holds no recorded step to report (not even the state at t = 0)")
    arrays = {k: v[:rows] for k, v in data.items() if isinstance(v, np.ndarray) and v.shape[:1] == (data["time"].size,)}
    layout = _layout(attrs, data["dofs"], arrays, max_points)
    builder = FrameBuilder(layout)
    frame = builder.frame(arrays, 0, rows)
    frame.progress.state = str(attrs.get("status", "unknown"))
    summary = _summary(attrs)
    frame.progress.elapsed_s = summary.get("loop_wall_s", float(np.sum(arrays["wall_step_s"])))
    frame.progress.eta_s = -1.0
    info = run_info(layout)
    payload = {"info": info_json(info), "frames": [frame_json(f, info) for f in merged_chunks([frame])]}
    sections = _sections(results, attrs, summary, layout, arrays, rows, module_records(data),
                         integrity_card({**arrays, **{k: v for k, v in data.items() if "/records/" in k}},
                                        json.loads(attrs.get("experiment_table", "{}")), list(data["dofs"]),
                                        {m.name: m.dofs for m in layout.modules}, json.loads(attrs.get("stop", "{}"))))
    return render_page(title=f"hybridsim report: {layout.experiment}", live=False, payload=payload,
                       sections=sections, banner=stop_banner(attrs, layout, rows) + damaged_banner(skipped or []))


def _summary(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The run's summary; a run that did not complete has none (the attribute is empty)."""
    return json.loads(attrs["summary"]) if attrs.get("summary") else {}


def stop_banner(attrs: Mapping[str, Any], layout: RunLayout, rows: int) -> str:
    """Why and where a run that did not complete stopped (empty for a completed run)."""
    status = str(attrs.get("status", "unknown"))
    if status == "completed":
        return ""
    stop = json.loads(attrs["stop"]) if attrs.get("stop") else {"reason": status.removeprefix("stopped: ")}
    if status == "running":
        title = "Run not finished: the file is still marked running (its coordinator is running or was killed)"
        stop = {"reason": "no end was recorded"}
    else:
        title = "Run stopped before the end of the record"
    table = [["why", str(stop.get("cause") or stop["reason"])]]
    if "step" in stop:
        at = f"step {stop['step']}" + (f" (t = {stop['time_s']:.6g} s)" if "time_s" in stop else "")
        table.append(["stopped at", f"{at}: it did not complete and is not in the file"])
    if "module" in stop:
        table.append(["module", str(stop["module"])])
    last = rows - 1
    table.append(["last completed step", f"{last} of {layout.total_steps} (t = {last * layout.dt:.6g} s); "
                                          "the file holds every step up to it"])
    table.append(["status", status])
    heading = html.escape(title)
    return f'<section class="stopped-banner" id="report-stop"><h2>{heading}</h2>{_table(table)}</section>'


def damaged_banner(skipped: list[str]) -> str:
    """The damaged records a report leaves out, one line each (empty when none)."""
    if not skipped:
        return ""
    return ('<section class="stopped-banner" id="report-damaged"><h2>Damaged records skipped: not shown</h2>'
            + "".join(f"<p>{html.escape(line)}</p>" for line in skipped) + "</section>")


def _layout(attrs: Mapping[str, Any], dofs: list[str], arrays: Mapping[str, np.ndarray],
            max_points: int) -> RunLayout:
    """The live monitor's layout from the experiment stored in the file, the modules named as they described
    themselves; without the experiment, modules by position."""
    described = json.loads(attrs.get("module_descriptions", "{}"))
    realtime = bool(_summary(attrs).get("realtime", False))
    table = json.loads(attrs["experiment_table"]) if "experiment_table" in attrs else None
    if table is not None:
        try:
            experiment = parse_experiment(table, base_dir=Path(attrs.get("base_dir", ".")), source=attrs.get("source", ""))
            return layout_of_experiment(experiment, arrays, described, realtime=realtime, max_points=max_points)
        except UsageError:
            pass  # the experiment's files are not where the run had them: the modules as the file describes them
    names = json.loads(attrs.get("modules", "{}"))
    widths = {name: arrays[f"modules/{name}/displacement"].shape[1] for name in names}
    dt = float(attrs.get("dt", arrays["time"][1] - arrays["time"][0]))
    total = _total_steps(attrs, arrays)
    return run_layout(experiment=str(attrs.get("experiment", "run")), integrator=str(attrs.get("integrator", "")),
                      dt=dt, total_steps=total, dofs=dofs, shaken=(), widths=widths, described=described,
                      realtime=realtime, max_points=max_points,
                      modules=[(name, {}, where) for name, where in names.items()])


def _total_steps(attrs: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> int:
    return int(_summary(attrs).get("steps", arrays["time"].size - 1))


# -- the sections after the plots --------------------------------------------------------------------------
def _table(rows: list[list[str]], header: list[str] | None = None) -> str:
    head = "" if header is None else "<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr></thead>"
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table>{head}<tbody>{body}</tbody></table>"


def _card(title: str, content: str, element_id: str) -> str:
    return f'<section class="card" id="{element_id}"><h2>{html.escape(title)}</h2>{content}</section>'


def _number(value: Any) -> str:
    if isinstance(value, (int, np.integer)):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    return str(value)


def j_table(criteria: Mapping[str, Any]) -> str:
    """The J table: one row per criterion, one column per channel (a criterion may be one number)."""
    width = max((len(v) if isinstance(v, list) else 1) for v in criteria.values())
    rows = [[name] + [_number(x) for x in (value if isinstance(value, list) else [value])] for name, value in
            criteria.items()]
    return _table(rows, ["criterion"] + [f"channel {i + 1}" for i in range(width)] if width > 1 else None)


def module_records(data: Mapping[str, Any]) -> list[list[str]]:
    """One row per module record in the file: module, record, rows x columns."""
    out = []
    for key, values in sorted(data.items()):
        parts = key.split("/")
        if len(parts) > 3 and parts[0] == "modules" and parts[2] == "records" and isinstance(values, np.ndarray):
            shape = values.shape if values.ndim == 2 else (values.size, 1)
            out.append([parts[1], "/".join(parts[3:]), f"{shape[0]} x {shape[1]}"])
    return out


def _sections(results: Path, attrs: Mapping[str, Any], summary: Mapping[str, Any], layout: RunLayout,
              arrays: Mapping[str, np.ndarray], rows: int, records: list[list[str]], integrity: str = "") -> str:
    wall = arrays["wall_step_s"][1:rows]
    p50, p99, top = np.percentile(wall, [50, 99, 100]) if wall.size else (0.0, 0.0, 0.0)
    run = [["results file", str(results)], ["status", str(attrs.get("status", ""))],
           ["steps completed", f"{rows - 1} of {layout.total_steps}"], ["dt", f"{layout.dt:g} s"],
           ["integrator", layout.integrator]]
    described = json.loads(attrs.get("module_descriptions", "{}"))
    run += [[f"module {m.name}", f"{m.where}; DOFs {', '.join(m.dofs)}"
             + (f"; configuration as the {described[m.name]['config_source']} gives it" if m.name in described else "")]
            for m in layout.modules]
    timing = [["step wall time p50 / p99 / max", f"{1e3 * p50:.4g} / {1e3 * p99:.4g} / {1e3 * top:.4g} ms"],
              ["steps with wall time > dt", str(int(np.count_nonzero(wall > layout.dt)))]]
    for key, label in (("wall_s", "wall time of the run (s)"), ("loop_wall_s", "wall time of the step loop (s)"),
                       ("steps_per_second", "steps per second"), ("realtime", "paced to the wall clock"),
                       ("late_steps", "late steps (real-time pacer)"), ("max_lateness_us", "worst lateness (us)")):
        if key in summary:
            timing.append([label, _number(summary[key])])
    for name, stats in summary.get("modules", {}).items():
        if "clock_steps" in stats:  # a site on its own clock (hybridsim.modules.experimental.clock)
            timing.append([f"site {name}'s own clock", format_site_clock(name, stats).split(": ", 1)[1]])
    parts = [_card("Run", _table(run), "report-run"), _card("Timing", _table(timing), "report-timing")]
    parts += [integrity] if integrity else []
    if records:
        parts.append(_card("Module records (in the results file; hybridsim export writes them with their units)",
                           _table(records, ["module", "record", "rows x columns"]), "report-records"))
    if "J" in attrs:
        parts.insert(0, _card("Evaluation criteria J", j_table(json.loads(attrs["J"])), "report-j"))
    if attrs.get("source"):
        parts.append(_card("Configuration (the experiment file)", f"<pre>{html.escape(attrs['source'])}</pre>",
                           "report-config"))
    return '<div class="report-sections">' + "".join(parts) + "</div>"
