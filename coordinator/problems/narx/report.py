"""The NARX study's outputs: the J1..J10 tables, results.json, the parameter histories (HDF5), plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.base import pyplot, save_figure, write_json
from hybridsim.coordinator.problems.marths import parts
from hybridsim.coordinator.problems.narx.study import CaseResult, Study, best_narx, study_json

TRACKING = ("J1", "J2", "J3", "J4")
GLOBAL = ("J5", "J6", "J7", "J8", "J9", "J10")
TRACKING_WINDOW_S = (7.0, 9.0)
"""the strongest shaking of El Centro (the reference peaks at 7.71 s): the tracking plot's time axis"""


def _cell(values: list[float | None]) -> str:
    return "/".join("-" if v is None else f"{v:.1f}" for v in values)


def _status(r: CaseResult) -> str:
    if not r.unstable:
        return "stable"
    return "UNSTABLE" if r.reason is None else f"UNSTABLE {r.reason.split(' at t = ')[-1].split(' ')[0]} s"


def _peak_parameter(r: CaseResult) -> str:
    peaks = [max(p, default=0.0) for p in r.parameters.get("peak_abs", [[], []])]
    return "/".join(f"{p:.3g}" for p in peaks) if any(peaks) else "-"


def format_table(study: Study) -> str:
    """Two blocks (tracking J1..J4 with the peak |parameter|; estimation and global J5..J10), rounded to 0.1."""
    names = [r.case.name for r in study.results]
    width = max(len(n) for n in names) + 2
    head1 = ["status", *TRACKING, "peak |param|"]
    rows1 = [[_status(r), *(_cell(r.criteria[j]) for j in TRACKING), _peak_parameter(r)] for r in study.results]
    head2 = list(GLOBAL)
    rows2 = [[_cell(r.criteria[j]) for j in GLOBAL] for r in study.results]
    s = study.setting
    delays = "" if s.delays_s is None else " / ".join(f"{1000 * d:.2f}" for d in s.delays_s)
    lines = [f"NARX study: {s.spec.record} x {s.spec.scale}, nominal plant, {s.spec.ticks()} samples; "
             f"delay measured without compensation (J1): {delays} ms; gate g: {s.excitation_mm:.4f} mm; "
             f"divergence bound: {s.limits[0].tracking:.3f} / {s.limits[1].tracking:.3f} mm; "
             f"saturation {s.limits[0].volts:g} V",
             "J1, J4 in ms, the others in %; a/b = actuator 1/2 (J1-J4) or x/theta (J5-J7, J9); "
             "J8, J10: x2/theta2/x3/theta3", ""]
    for head, rows in ((head1, rows1), (head2, rows2)):
        widths = [max(len(h), *(len(row[i]) for row in rows)) + 2 for i, h in enumerate(head)]
        lines.append("case".ljust(width) + "".join(h.rjust(w) for h, w in zip(head, widths)))
        lines += [n.ljust(width) + "".join(c.rjust(w) for c, w in zip(row, widths)) for n, row in zip(names, rows)]
        lines.append("")
    stops = [f"  {r.case.name}: {r.reason}" for r in study.results if r.unstable]
    if stops:
        lines += ["unstable runs (criteria over the samples before the stop):", *stops, ""]
    best = best_narx(study)
    if best is not None:
        lines.append(f"best stable NARX case (lowest mean J2): {best.case.name}")
    return "\n".join(lines)


def write_results(study: Study, out: Path) -> None:
    """results.json (the --json object plus the setting and wall times), table.txt and parameters.h5 in ``out``."""
    s = study.setting
    document: dict[str, Any] = {
        **study_json(study),
        "setting": {"record": s.spec.record, "scale": s.spec.scale, "plant": s.spec.plant, "samples": s.spec.ticks(),
                    "uncompensated_delay_s": None if s.delays_s is None else list(s.delays_s),
                    "excitation_mm": s.excitation_mm,
                    "limits": [{"tracking_mm": lim.tracking, "volts": lim.volts} for lim in s.limits]},
        "wall_s": {r.case.name: r.wall_s for r in study.results}}
    write_json(out / "results.json", document)
    (out / "table.txt").write_text(format_table(study) + "\n")
    _write_parameters(study, out / "parameters.h5")


def write_plots(study: Study, out: Path) -> list[Path]:
    """parameters_<group>.png, tracking.png (if any case it shows ran) and criteria.png in ``out``."""
    return [*_plot_parameters(study, out), *_plot_tracking(study, out / "tracking.png"),
            _plot_criteria(study, out / "criteria.png")]


def _write_parameters(study: Study, path: Path) -> None:
    import h5py

    with h5py.File(path, "w") as f:
        f.attrs["sample_rate_hz"] = parts.SAMPLE_RATE
        for r in study.results:
            group = f.create_group(r.case.name)
            group.attrs["unstable"] = r.unstable
            group.attrs["reason"] = r.reason or ""
            terms = r.parameters.get("terms")
            if terms:
                group.attrs["terms"] = terms
            for i, log in enumerate(r.parameter_history, start=1):
                group.create_dataset(f"actuator{i}", data=log, compression="gzip")


def _plot_parameters(study: Study, out: Path) -> list[Path]:
    """parameters_<group>.png: every parameter of every NARX case of a group against time, per actuator."""
    plt = pyplot()
    groups: dict[str, list[CaseResult]] = {}
    written: list[Path] = []
    for r in study.results:
        if r.case.kind == "narx":
            groups.setdefault(r.case.group, []).append(r)
    for group, results in groups.items():
        fig, axes = plt.subplots(len(results), 2, figsize=(11, 1.9 * len(results) + 0.8), squeeze=False,
                                 sharex=True)
        for row, r in zip(axes, results):
            for i, (ax, log) in enumerate(zip(row, r.parameter_history)):
                t = np.arange(log.shape[0]) / parts.SAMPLE_RATE
                for k, label in enumerate(r.parameters["terms"]):
                    ax.plot(t, log[:, k], lw=0.7, label=label)
                ax.set_yscale("symlog", linthresh=1.0)
                ax.set_title(f"{r.case.name}, actuator {i + 1}" + (" (unstable)" if r.unstable else ""), fontsize=8)
                ax.tick_params(labelsize=7)
        axes[0][1].legend(fontsize=6, loc="upper right")
        for ax in axes[-1]:
            ax.set_xlabel("time (s)")
        fig.suptitle(f"NARX parameters: {group} (symlog axis)", fontsize=10)
        written.append(save_figure(fig, out / f"parameters_{group.replace(' ', '_')}.png"))
    return written


def _plot_tracking(study: Study, path: Path) -> list[Path]:
    """Target vs measured strokes during the strongest shaking: RLS-AC, the best NARX and good IC, if run."""
    plt = pyplot()
    best = best_narx(study)
    shown = [r for r in study.results if r.case.name in ("rls", "ic-good") and r.strokes]
    if best is not None:
        shown.append(best)
    if not shown:
        return []
    fig, axes = plt.subplots(len(shown), 2, figsize=(11, 2.4 * len(shown)), squeeze=False, sharex=True)
    for row, r in zip(axes, shown):
        target, measured = r.strokes["target_strokes"], r.strokes["measured_strokes"]
        t = np.arange(target.shape[0]) / parts.SAMPLE_RATE
        window = (t >= TRACKING_WINDOW_S[0]) & (t <= TRACKING_WINDOW_S[1])
        for i, ax in enumerate(row):
            ax.plot(t[window], target[window, i], "k", lw=1.0, label="target")
            ax.plot(t[window], measured[window, i], "C3", lw=0.8, label="measured")
            ax.set_title(f"{r.case.name}, actuator {i + 1}: J2 = {r.criteria['J2'][i]:.1f} %", fontsize=9)
            ax.set_ylabel("stroke (mm)", fontsize=8)
    axes[0][0].legend(fontsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    return [save_figure(fig, path)]


def _plot_criteria(study: Study, path: Path) -> Path:
    """J2 (tracking) and J5 (estimation) per case and actuator/DOF, unstable cases hatched, log axis."""
    plt = pyplot()
    results = study.results
    x = np.arange(len(results))
    fig, axes = plt.subplots(2, 1, figsize=(max(10, 0.35 * len(results)), 7), sharex=True)
    for ax, j, labels in ((axes[0], "J2", ("actuator 1", "actuator 2")), (axes[1], "J5", ("x", "theta"))):
        for i, label in enumerate(labels):
            values = [r.criteria[j][i] if r.criteria[j][i] is not None else np.nan for r in results]
            bars = ax.bar(x + (i - 0.5) * 0.4, values, 0.4, label=label, color=f"C{i}")
            for bar, r in zip(bars, results):
                if r.unstable:
                    bar.set_hatch("//")
                    bar.set_alpha(0.5)
        ax.set_yscale("log")
        ax.set_ylabel(f"{j} (%)")
        ax.legend(fontsize=8)
    axes[1].set_xticks(x, [r.case.name for r in results], rotation=75, fontsize=7)
    axes[0].set_title("NARX study, El Centro 40 %, nominal plant (hatched: unstable, over the samples before "
                      "the stop)", fontsize=9)
    return save_figure(fig, path)
