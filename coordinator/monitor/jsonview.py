"""The monitor's messages as the JSON the page reads: columns per DOF, null where a value is not finite."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hybridsim.v1 import monitor_pb2 as pb


def _plain(values: Any) -> list[float | None]:
    return [v if math.isfinite(v) else None for v in np.asarray(values, dtype=float).tolist()]


def _columns(values: Any, samples: int, width: int) -> list[list[float | None]]:
    """Row-major ``samples x width`` values as ``width`` columns."""
    if width == 0 or len(values) == 0:
        return [[] for _ in range(width)]
    return [_plain(column) for column in np.asarray(values, dtype=float).reshape(samples, width).T]


def info_json(info: pb.RunInfo) -> dict[str, Any]:
    return {
        "experiment": info.experiment, "integrator": info.integrator, "dt_s": info.dt_s,
        "total_steps": info.total_steps, "decimation": info.decimation,
        "response_dofs": list(info.response_dofs), "step_time_edges_s": list(info.step_time_edges_s),
        "realtime": info.realtime,
        "modules": [{"name": m.name, "dofs": list(m.dofs), "where": m.where, "has_command": m.has_command,
                     "kind": m.kind, "actuated": m.actuated,
                     "displacement_limit": _plain(m.displacement_limit), "force_limit": _plain(m.force_limit)}
                    for m in info.modules],
        "indicators": [{"dataset": i.dataset, "module": i.module, "indicator": i.indicator, "columns": list(i.columns),
                        "unit": i.unit, "threshold": i.threshold if i.HasField("threshold") else None,
                        "action": i.action} for i in info.indicators],
    }


def progress_json(progress: pb.Progress) -> dict[str, Any]:
    return {
        "step": progress.step, "time_s": progress.time_s, "total_steps": progress.total_steps,
        "state": progress.state, "late_steps": progress.late_steps, "max_wall_step_s": progress.max_wall_step_s,
        "mean_wall_step_s": progress.mean_wall_step_s, "elapsed_s": progress.elapsed_s, "eta_s": progress.eta_s,
        "dropped_frames": progress.dropped_frames, "step_time_counts": list(progress.step_time_counts),
        "displacement_margin": _plain(progress.displacement_margin), "force_margin": _plain(progress.force_margin),
        "counters": {c.module: dict(c.values) for c in progress.counters},
        "crossings": [{"module": c.module, "indicator": c.indicator, "value": c.value, "threshold": c.threshold,
                       "step": c.step, "time_s": c.time_s, "action": c.action} for c in progress.crossings],
    }


def frame_json(frame: pb.Frame, info: pb.RunInfo) -> dict[str, Any]:
    samples = len(frame.step)
    width = sum(len(m.dofs) for m in info.modules)
    return {
        "step": list(frame.step), "time": list(frame.time_s), "wall": list(frame.wall_step_s),
        "ground": list(frame.ground_acceleration),
        "response": _columns(frame.response, samples, len(info.response_dofs)),
        "command": _columns(frame.command, samples, width), "measured": _columns(frame.measured, samples, width),
        "force": _columns(frame.force, samples, width),
        "indicators": _columns(frame.indicators, samples, sum(len(i.columns) for i in info.indicators)),
        "progress": progress_json(frame.progress),
    }
