"""How a run ends: its status (the results file's ``status`` and ``stop``), the file closed with it however the run
ends, and the run's summary figures."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hybridsim.coordinator.excitation import peaks
from hybridsim.coordinator.experiment import Experiment
from hybridsim.coordinator.pacing import Pacer
from hybridsim.coordinator.recorder import Recorder
from hybridsim.coordinator.run_loop import Start
from hybridsim.coordinator.window import Durations, RowWindow

COVERAGE = ("steps, module_evaluations and the peaks cover the whole run; wall_s, loop_wall_s, steps_per_second, "
            "step_time_us, compute_time_us and the late steps cover the steps_this_session steps of this session, "
            "which for a resumed run are those after the checkpoint at resumed_from_step")
STEP_TIME_BASIS = ("step_time_us: issue to the end of all the coordinator's work for the step (modules, integrator, "
                   "recording, listeners, progress), what a real-time slot must hold; compute_time_us: issue to "
                   "commit at every module (the results file's /wall_step_s)")


class Status:
    """How a run ended: ``text`` is the file's ``status``; ``stop`` says why and where it stopped (attribute "stop")."""

    def __init__(self) -> None:
        self.text = "stopped: interrupted"
        self.summary: dict[str, Any] | None = None
        """the run's figures: a completed run's, or those of the steps a stopped run ran"""
        self.stop: dict[str, Any] | None = {"reason": "interrupted"}
        self.unexplained = True
        """nothing has said yet how the run ends (a run that ends so was interrupted where it could not say)"""

    def stopped(self, reason: str, *, step: int | None = None, time_s: float | None = None, module: str | None = None,
                cause: str | None = None, signal: str | None = None) -> None:
        """The run stops: ``reason`` in full; the step n that did not complete, its time (s), the module, the cause,
        the signal that stopped it."""
        self.text = f"stopped: {reason}"
        where = {"step": step, "time_s": time_s, "module": module, "cause": cause, "signal": signal}
        self.stop = {"reason": reason, **{k: v for k, v in where.items() if v is not None}}
        self.unexplained = False

    def completed(self, summary: dict[str, Any]) -> None:
        self.text, self.summary, self.stop, self.unexplained = "completed", summary, None, False


@contextlib.contextmanager
def recorder_closed(recorder: Recorder, window: RowWindow) -> Iterator[Status]:
    """Write every completed row and close the recorder with the run's final status, however the run ends."""
    status = Status()
    try:
        yield status
    except BaseException as exc:
        if status.unexplained and not isinstance(exc, KeyboardInterrupt):
            status.stopped(f"{type(exc).__name__}: {exc}", step=window.rows, cause=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        recorder.submit(window.rows)
        recorder.close(status.text, status.summary, status.stop)


def summary(exp: Experiment, start: Start, loop_wall: float, step_times: Durations, total_wall: float,
            modules: dict[str, dict[str, float]], pacer: Pacer | None,
            peak_order: Sequence[tuple[int, str, str]]) -> dict[str, Any]:
    """The run's figures; the step-time distributions and rates are over the steps of this loop, the counts of
    steps and evaluations and the peaks over the whole run (see COVERAGE, STEP_TIME_BASIS).

    Quantiles come from :class:`hybridsim.coordinator.window.Durations` (within 0.25 %, maximum exact).
    The peaks follow ``peak_order`` ((index, DOF, unit): floors, interfaces, then the rest)."""
    rows, figures = start.window.rows, start.figures
    realtime, late = pacer is not None, pacer.late if pacer is not None else 0
    looped = rows - 1 - start.step
    return {
        "experiment": exp.name,
        "integrator": exp.integrator,
        "dt_s": exp.dt,
        "steps": rows - 1,
        "resumed_from_step": start.resumed_from,
        "steps_this_session": looped,
        "coverage": COVERAGE,
        "simulated_s": float(start.window.view["time"][rows - 1]) if exp.program is None else
        exp.program.simulated_s(rows, exp.dt),
        "wall_s": total_wall,
        "loop_wall_s": loop_wall,
        "steps_per_second": looped / loop_wall if loop_wall > 0 else float("inf"),
        "module_evaluations": {"per_step": figures.evaluations / (rows - 1) if rows > 1 else 0.0,
                               "max_in_a_step": figures.most_evaluations},
        "pretest_asymmetry": start.asymmetry,
        "natural_periods_s": list(start.periods),
        "excitation": peaks(exp.components, exp.dt),
        "stages": exp.program.describe() if exp.program is not None else [],
        "step_time_us": step_times.quantiles_us(),
        "compute_time_us": figures.compute.quantiles_us(),
        "step_time_basis": STEP_TIME_BASIS,
        "realtime": realtime,
        "late_steps": late,
        "late_steps_pct": 100.0 * late / looped if looped else 0.0,
        "max_lateness_us": 1e6 * pacer.max_lateness_s if pacer is not None else 0.0,
        "peak_displacement": {d: float(figures.peaks.value[i]) for i, d, _ in peak_order},
        "peak_time_s": {d: float(figures.peaks.time[i]) for i, d, _ in peak_order},
        "peak_units": {d: unit for _, d, unit in peak_order},
        "modules": modules,
        "network": {m.name: m.network.describe() for m in exp.modules if m.network is not None},
    }


def with_network_stats(summaries: Mapping[str, dict[str, Any]], networks: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The modules' closing summaries with each lab-protocol client's emulated network counters added."""
    return {name: {**values, **(networks[name].stats() if name in networks else {})}
            for name, values in summaries.items()}
