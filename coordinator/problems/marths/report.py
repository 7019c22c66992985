"""Reporting a maRTHS campaign: the J table, time histories (HDF5, MATLAB .mat) and plots.

Signals are stored under the benchmark's own names (SPEC §13: xa1_t, xa1m,
xm_hat, xNum, xRef_2st, cmd1_v, ...) so MATLAB users find what they know.
Values are rounded only in the printed table (to 0.1, as the benchmark
reports); files hold them unrounded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from hybridsim.coordinator.problems.base import pyplot, save_figure
from hybridsim.coordinator.problems.marths import loop
from hybridsim.coordinator.problems.marths.evaluation import CRITERIA
from hybridsim.coordinator.problems.marths.campaign import TrialResult, spread

CRITERIA_ROWS = {
    "J1": ("tracking delay", "ms", ("act 1", "act 2")),
    "J2": ("tracking NRMS", "%", ("act 1", "act 2")),
    "J3": ("tracking peak", "%", ("act 1", "act 2")),
    "J4": ("estimation delay", "ms", ("act 1", "act 2")),
    "J5": ("estimation NRMS", "%", ("x", "theta")),
    "J6": ("estimation peak", "%", ("x", "theta")),
    "J7": ("global NRMS", "%", ("x", "theta")),
    "J8": ("storey NRMS", "%", ("x2", "theta2", "x3", "theta3")),
    "J9": ("global peak", "%", ("x", "theta")),
    "J10": ("storey peak", "%", ("x2", "theta2", "x3", "theta3")),
}


def run_label(index: int) -> str:
    return "nominal" if index == 0 else f"trial{index:02d}"


def format_table(results: Sequence[TrialResult], title: str) -> str:
    """The J table: nominal run, and mean +- std over the uncertain runs (rounded to 0.1)."""
    nominal = results[0].criteria
    trials = [r.criteria for r in results[1:]]
    sigma = spread(results)
    header = f"{'':4} {'criterion':17} {'unit':4} {'':7} {'nominal':>9}"
    if trials:
        header += f"  {f'mean +- std ({len(trials)} uncertain)':>28}"
    lines = [title, header, "-" * len(header)]
    for name in CRITERIA:
        label, unit, channels = CRITERIA_ROWS[name]
        for i, channel in enumerate(channels):
            row = f"{name if i == 0 else '':4} {label if i == 0 else '':17} {unit:4} {channel:7} {nominal[name][i]:9.1f}"
            if trials:
                mean = float(np.mean([t[name][i] for t in trials]))
                row += f"  {mean:19.1f} +- {sigma[name][i]:5.1f}"  # type: ignore[index]
            lines.append(row)
    volts = [max(r.max_command_volts[i] for r in results) for i in range(2)]
    flagged = [run_label(i) for i, r in enumerate(results) if not r.realizable]
    lines.append(f"max |command| = {volts[0]:.2f} V / {volts[1]:.2f} V (limit 3.8 V): "
                 + ("realizable" if not flagged else f"NOT realizable in {', '.join(flagged)}"))
    return "\n".join(lines)


def named_signals(h: loop.History) -> dict[str, np.ndarray]:
    """The logged signals of a run under the benchmark's names (mm; rad frame sign; m, rad SAP for storeys)."""
    out = {"time": h.time, "ag": h.ground_acceleration}
    for i in (0, 1):
        out[f"xa{i + 1}_t"] = h.target_strokes[:, i]
        out[f"xa{i + 1}m"] = h.measured_strokes[:, i]
        out[f"cmd_u{i + 1}"] = h.commands[:, i]
        out[f"cmd{i + 1}_v"] = h.command_volts[:, i]
    out.update(xm_hat=h.estimate[:, 0], rm_hat=h.estimate[:, 1], rm2_hat=h.estimate[:, 2])
    names = ("x{}", "r{}", "x{}_2st", "r{}_2st", "x{}_3st", "r{}_3st")
    for prefix, data in (("Num", h.numerical), ("Ref", h.reference)):
        for j, pattern in enumerate(names):
            out[pattern.format(prefix)] = data[:, j]
    out.update(F27=h.feedback[:, 0], M21=h.feedback[:, 1], M29=h.feedback[:, 2])
    return out


def _run_attributes(result: TrialResult) -> dict[str, str]:
    spec = {k: ("" if v is None else v) for k, v in asdict(result.spec).items()}
    return {"spec": json.dumps(spec), "J": json.dumps(result.criteria),
            "max_command_volts": json.dumps(result.max_command_volts), "realizable": str(result.realizable)}


def write_hdf5(results: Sequence[TrialResult], summary: dict, path: Path) -> None:
    """One group per run (nominal, trial01, ...) with the named signals; specs, J and the summary as JSON attributes."""
    import h5py

    with h5py.File(path, "w") as f:
        f.attrs["summary"] = json.dumps(summary)
        f.attrs["benchmark"] = "maRTHS (Condori Uribe et al. 2023), loop of FermandoisLab/maRTHS-bmk-RoDeAC"
        for i, result in enumerate(results):
            if result.history is None:
                continue
            group = f.create_group(run_label(i))
            for key, value in _run_attributes(result).items():
                group.attrs[key] = value
            for name, data in named_signals(result.history).items():
                group.create_dataset(name, data=data, compression="gzip", shuffle=True)


def write_mat(results: Sequence[TrialResult], path: Path) -> None:
    """A MATLAB file with one struct per run (nominal, trial01, ...) of the named signals and J."""
    import scipy.io

    content = {}
    for i, result in enumerate(results):
        if result.history is None:
            continue
        struct = {name: data[:, None] for name, data in named_signals(result.history).items()}
        struct["J"] = {name: np.asarray(v) for name, v in result.criteria.items()}
        content[run_label(i)] = struct
    scipy.io.savemat(path, content, do_compression=True, oned_as="column")


def write_plots(results: Sequence[TrialResult], folder: Path) -> list[Path]:
    """strokes.png, synchronization.png, interface.png, storeys.png (nominal run) and j_bars.png (every run)."""
    plt = pyplot()
    h = results[0].history
    figures = {} if h is None else {
        "strokes.png": _strokes(plt, h), "synchronization.png": _synchronization(plt, h),
        "interface.png": _interface(plt, h), "storeys.png": _storeys(plt, h)}
    figures["j_bars.png"] = _j_bars(plt, results)
    return [save_figure(fig, folder / name) for name, fig in figures.items()]


def _strokes(plt, h):
    """Each actuator's target and measured stroke, whole record and the second around the peak."""
    t = h.time
    peak = int(np.argmax(np.abs(h.target_strokes[:, 0])))
    window = slice(max(peak - 512, 0), peak + 512)
    fig, axes = plt.subplots(2, 2, figsize=(11, 6))
    for i in (0, 1):
        for ax, part in ((axes[0, i], slice(None)), (axes[1, i], window)):
            ax.plot(t[part], h.target_strokes[part, i], label="target")
            ax.plot(t[part], h.measured_strokes[part, i], label="measured", lw=0.8)
            ax.set(xlabel="time (s)", ylabel=f"actuator {i + 1} stroke (mm)")
        axes[0, i].set_title(f"actuator {i + 1}")
        axes[0, i].legend(loc="upper right")
    return fig


def _synchronization(plt, h):
    """Measured against target stroke per actuator, with the line of perfect tracking."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 5))
    for i, ax in enumerate(axes):
        ax.plot(h.target_strokes[:, i], h.measured_strokes[:, i], lw=0.5)
        lim = np.max(np.abs(h.target_strokes[:, i])) * 1.1
        ax.plot([-lim, lim], [-lim, lim], "k--", lw=0.8, label="perfect tracking")
        ax.set(xlabel="target (mm)", ylabel="measured (mm)", title=f"synchronization subspace, actuator {i + 1}",
               aspect="equal")
        ax.legend(loc="upper left")
    return fig


def _interface(plt, h):
    """The interface DOFs: reference, numerical target and measured estimate."""
    t = h.time
    fig, axes = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    for ax, j, unit in ((axes[0], 0, "x (mm)"), (axes[1], 1, "theta (rad, frame sign)")):
        ax.plot(t, h.reference[:, j], label="reference", lw=1.2)
        ax.plot(t, h.numerical[:, j], label="numerical (target)", lw=0.8)
        ax.plot(t, h.estimate[:, j], label="measured (hat)", lw=0.6)
        ax.set(ylabel=unit)
        ax.legend(loc="upper right")
    axes[1].set_xlabel("time (s)")
    axes[0].set_title("interface response vs the reference structure")
    return fig


def _storeys(plt, h):
    """The 2nd and 3rd storeys' responses against the reference structure."""
    t = h.time
    fig, axes = plt.subplots(4, 1, figsize=(11, 9), sharex=True)
    for ax, j, unit in zip(axes, range(2, 6), ("x 2nd (m)", "theta 2nd (rad)", "x 3rd (m)", "theta 3rd (rad)")):
        ax.plot(t, h.reference[:, j], label="reference", lw=1.2)
        ax.plot(t, h.numerical[:, j], label="hybrid", lw=0.8)
        ax.set(ylabel=unit)
    axes[0].legend(loc="upper right")
    axes[0].set_title("storey responses vs the reference structure")
    axes[-1].set_xlabel("time (s)")
    return fig


def _j_bars(plt, results: Sequence[TrialResult]):
    """Every evaluation criterion of every run, side by side."""
    labels = [f"{name} {ch}" for name in CRITERIA for ch in CRITERIA_ROWS[name][2]]
    values = np.array([[v for name in CRITERIA for v in r.criteria[name]] for r in results])
    fig, ax = plt.subplots(figsize=(13, 5))
    width = 0.8 / len(results)
    x = np.arange(len(labels))
    for i, row in enumerate(values):
        ax.bar(x + (i - (len(results) - 1) / 2) * width, row, width, label=run_label(i))
    ax.set_xticks(x, labels, rotation=70, fontsize=8)
    ax.set(ylabel="J (ms for J1, J4; % otherwise)", title="evaluation criteria per run")
    ax.legend(fontsize=7, ncol=min(len(results), 6))
    return fig
