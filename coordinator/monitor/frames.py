"""Frames of the observer stream, built from a run's history arrays (live, or read back from a results file).

A frame carries the sampled rows of a range of steps (every ``decimation``-th
step and the last step of the range) and the progress at its last step; the
step-time statistics, late steps and limit margins are exact over every step,
not only the sampled ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from hybridsim.coordinator.monitor.indicators import Crossings, indicator_info, indicator_rows
from hybridsim.coordinator.monitor.layout import RunLayout
from hybridsim.v1 import monitor_pb2 as pb

STEP_TIME_EDGES_S = np.geomspace(1e-6, 10.0, 71)
"""edges of the step wall-time histogram (s): 1 us to 10 s, ten bins per decade"""

SAMPLE_FIELDS = ("step", "time_s", "wall_step_s", "ground_acceleration", "response", "command", "measured", "force",
                 "indicators")
TERMINAL_STATES = ("completed", "stopped")
CHUNK_SAMPLES = 2000
"""samples per frame when a history is sent in one go (to a late observer, into a report)"""


def is_terminal(state: str) -> bool:
    """True for the state of a run that has ended."""
    return state.startswith(TERMINAL_STATES)


def run_info(layout: RunLayout) -> pb.RunInfo:
    return pb.RunInfo(
        experiment=layout.experiment, integrator=layout.integrator, dt_s=layout.dt, total_steps=layout.total_steps,
        decimation=layout.decimation, response_dofs=layout.response_dofs, step_time_edges_s=STEP_TIME_EDGES_S,
        realtime=layout.realtime, indicators=indicator_info(layout.indicators),
        modules=[pb.ModuleInfo(name=m.name, dofs=m.dofs, where=m.where, has_command=m.command_index is not None,
                               kind=m.kind, actuated=m.actuated,
                               displacement_limit=() if m.displacement_limit is None else m.displacement_limit,
                               force_limit=() if m.force_limit is None else m.force_limit)
                 for m in layout.modules])


class FrameBuilder:
    """Frames of consecutive row ranges of one run; keeps the exact statistics over all steps seen."""

    def __init__(self, layout: RunLayout) -> None:
        self.layout = layout
        self.step_time_counts = np.zeros(STEP_TIME_EDGES_S.size - 1, dtype=np.int64)
        self.late_steps = 0
        self.max_wall_step_s = 0.0
        self._wall_sum = 0.0
        self.steps = 0
        width = layout.module_width
        self.displacement_margin = np.full(width, np.nan)
        self.force_margin = np.full(width, np.nan)
        self._limits = [(_concat([m.displacement_limit for m in layout.modules], [m.ndof for m in layout.modules]),
                         self.displacement_margin, "displacement"),
                        (_concat([m.force_limit for m in layout.modules], [m.ndof for m in layout.modules]),
                         self.force_margin, "force")]
        self.crossings = Crossings(layout.indicators)

    def frame(self, arrays: Mapping[str, np.ndarray], start: int, stop: int) -> pb.Frame:
        """The frame of rows ``start .. stop-1`` (row 0 is the state at t = 0, not a step)."""
        layout = self.layout
        first = -(-start // layout.decimation) * layout.decimation
        rows = np.arange(first, stop, layout.decimation)
        if rows.size == 0 or rows[-1] != stop - 1:
            rows = np.append(rows, stop - 1)
        modules = {q: self._module_rows(arrays, q, start, stop) for q in ("displacement", "force")}
        commands = np.hstack([arrays["displacement"][rows][:, m.command_index] if m.command_index is not None
                              else np.full((rows.size, m.ndof), np.nan) for m in layout.modules])
        frame = pb.Frame(step=rows, time_s=arrays["time"][rows], wall_step_s=arrays["wall_step_s"][rows],
                         ground_acceleration=arrays["ground_acceleration"][rows],
                         response=arrays["displacement"][rows][:, layout.response_index].ravel(),
                         command=commands.ravel(), measured=modules["displacement"][rows - start].ravel(),
                         force=modules["force"][rows - start].ravel(),
                         indicators=indicator_rows(arrays, layout.indicators, rows))
        self.crossings.observe(arrays, start, stop)  # (reads before it keeps anything, as _count)
        self._count(arrays["wall_step_s"][max(start, 1):stop], modules)
        self._fill_progress(frame.progress, stop - 1, float(arrays["time"][stop - 1]))
        return frame

    def _module_rows(self, arrays: Mapping[str, np.ndarray], quantity: str, start: int, stop: int) -> np.ndarray:
        return np.hstack([arrays[f"modules/{m.name}/{quantity}"][start:stop] for m in self.layout.modules])

    def _count(self, wall: np.ndarray, modules: Mapping[str, np.ndarray]) -> None:
        if wall.size:
            clipped = np.clip(wall, STEP_TIME_EDGES_S[0], STEP_TIME_EDGES_S[-1] * (1 - 1e-12))
            self.step_time_counts += np.histogram(clipped, STEP_TIME_EDGES_S)[0]
            self.late_steps += int(np.count_nonzero(wall > self.layout.dt))
            self.max_wall_step_s = max(self.max_wall_step_s, float(wall.max()))
            self._wall_sum += float(wall.sum())
            self.steps += wall.size
        for limit, margin, quantity in self._limits:
            if limit is not None:
                left = 1.0 - np.max(np.abs(modules[quantity]), axis=0) / limit
                left[np.isinf(limit)] = np.nan
                np.fmin(margin, left, out=margin)

    def _fill_progress(self, progress: pb.Progress, step: int, time_s: float) -> None:
        progress.step, progress.time_s, progress.total_steps = step, time_s, self.layout.total_steps
        progress.late_steps, progress.max_wall_step_s = self.late_steps, self.max_wall_step_s
        progress.mean_wall_step_s = self._wall_sum / self.steps if self.steps else 0.0
        progress.step_time_counts[:] = self.step_time_counts
        progress.displacement_margin[:] = self.displacement_margin
        progress.force_margin[:] = self.force_margin
        del progress.crossings[:]
        progress.crossings.extend(self.crossings.found)

    def progress(self, step: int, time_s: float) -> pb.Progress:
        """The progress at ``step`` without new samples (a heartbeat while the run is held)."""
        progress = pb.Progress()
        self._fill_progress(progress, step, time_s)
        return progress


def put_counters(progress: pb.Progress, counters: Mapping[str, Mapping[str, float]]) -> None:
    """The modules' event counters as they stand (a site clock's slowed steps, held and late samples) into
    ``progress``."""
    del progress.counters[:]
    for module, values in counters.items():
        progress.counters.add(module=module, values=values)


def _concat(limits: list[np.ndarray | None], widths: list[int]) -> np.ndarray | None:
    """One limit vector over all modules' DOFs (inf where a module declares none); None when none does."""
    if all(limit is None for limit in limits):
        return None
    return np.concatenate([np.full(w, np.inf) if limit is None else limit for limit, w in zip(limits, widths)])


def concatenated(frames: Iterable[pb.Frame]) -> pb.Frame:
    """One frame with the samples of ``frames`` in order and the progress of the last."""
    merged = pb.Frame()
    for frame in frames:
        for name in SAMPLE_FIELDS:
            getattr(merged, name).extend(getattr(frame, name))
        merged.progress.CopyFrom(frame.progress)
    return merged


def merged_chunks(frames: Sequence[pb.Frame], samples: int = CHUNK_SAMPLES) -> list[pb.Frame]:
    """``frames`` merged into frames of about ``samples`` samples each (the last progress in each)."""
    out, group, size = [], [], 0
    for frame in frames:
        group.append(frame)
        size += len(frame.step)
        if size >= samples:
            out.append(concatenated(group))
            group, size = [], 0
    if group:
        out.append(concatenated(group))
    return out
