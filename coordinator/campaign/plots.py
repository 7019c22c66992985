"""The campaign report's figures (matplotlib, PNG): IDA curves, the fragility curve, J histograms, the tornado."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.campaign.fragility import Fragility

J_COLUMNS = 6
"""histograms a row of j.png (a maRTHS campaign has 26: J1..J10 per actuator or DOF, the command volts)"""


def draw(result: dict[str, Any], folder: Path) -> list[Path]:
    """Every figure :func:`hybridsim.coordinator.campaign.report.study` has data for, written in ``folder``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    for name, figure in (("ida", _ida), ("fragility", _fragility), ("j", _j), ("tornado", _tornado)):
        fig = figure(plt, result)
        if fig is not None:
            fig.tight_layout()
            fig.savefig(folder / f"{name}.png", dpi=110)
            plt.close(fig)
            made.append(folder / f"{name}.png")
    return made


def _intensity(result: dict[str, Any]) -> str:
    """The intensity's axis label, with the period Sa was taken at (``Sa(T1 = 0.926 s, 5 %) (g)``)."""
    label = str(result["intensity"])
    if "period_s" not in result or not label.startswith("Sa("):
        return label
    low, high = result["period_s"]
    period = f"{low:.3g} s" if np.isclose(low, high, rtol=1e-3) else f"{low:.3g} to {high:.3g} s"
    return label.replace(",", f" = {period},", 1) if label.startswith("Sa(T1") else label


def _ida(plt: Any, result: dict[str, Any]) -> Any:
    if not result["ida"]:
        return None
    fig, ax = plt.subplots(figsize=(6, 4.5))
    finite = [v for _, y in result["ida"].values() for v in y if v is not None]
    edge = 1.05 * max(finite, default=1.0)
    for label, (im, y) in result["ida"].items():
        line, = ax.plot([np.nan if v is None else v for v in y], im, "o-", ms=4, label=Path(str(label)).stem)
        stopped = [x for x, v in zip(im, y) if v is None]
        if stopped:  # a stopped run: beyond every response (the curve's flatline), drawn at the right edge
            ax.plot([edge] * len(stopped), stopped, "x", color=line.get_color(), ms=7)
    if result["fragility"]:
        ax.axvline(result["fragility"]["limit"], color="k", ls="--", lw=1, label="limit")
    ax.set(xlabel=result["response"], ylabel=_intensity(result), title="Incremental dynamic analysis")
    ax.legend(fontsize=8)
    return fig


def _fragility(plt: Any, result: dict[str, Any]) -> Any:
    f = result["fragility"]
    if not f:
        return None
    im = np.concatenate([np.asarray(v[0]) for v in result["ida"].values()])
    y = np.array([np.inf if r is None else r for v in result["ida"].values() for r in v[1]], float)
    levels = np.unique(im)
    x = np.linspace(levels.min() * 0.5, levels.max() * 1.5, 200)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    if "at_limit" in f:  # each record's intensity at the limit: their empirical distribution
        at = np.sort(f["at_limit"])
        ax.plot(at, (np.arange(at.size) + 0.5) / at.size, "ko", label="records at the limit")
    else:
        ax.plot(levels, [np.mean(y[im == v] > f["limit"]) for v in levels], "ko", label="fraction exceeding")
    for theta, style, label in ((f["theta"], "-", f"theta = {f['theta']:.3g}, beta = {f['beta']:.2f}"),
                                (f["theta_band"][0], ":", "theta 5-95 % (bootstrap)"), (f["theta_band"][1], ":", None)):
        ax.plot(x, Fragility(theta, f["beta"], (theta, theta), 0).probability(x), "C0" + style, label=label)
    ax.set(xlabel=_intensity(result), ylabel="P(exceed)", ylim=(-0.02, 1.02),
           title=f"Fragility: {result['response']} > {f['limit']:g}")
    ax.legend(fontsize=8)
    return fig


def _j(plt: Any, result: dict[str, Any]) -> Any:
    if not result["j"]:
        return None
    columns = min(J_COLUMNS, len(result["j"]))
    rows = -(-len(result["j"]) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3 * columns, 3 * rows), squeeze=False)
    for ax, (name, values) in zip(axes.flat, result["j"].items()):
        ax.hist(values, bins=min(20, max(5, len(values) // 3)), color="C2")
        ax.set(xlabel=name, ylabel="runs")
    for ax in axes.flat[len(result["j"]):]:
        ax.set_visible(False)
    return fig


def _tornado(plt: Any, result: dict[str, Any]) -> Any:
    bars = result["tornado"]
    if not bars:
        return None
    fig, ax = plt.subplots(figsize=(7, 1.5 + 0.5 * len(bars)))
    centre = np.mean([(low + high) / 2 for _, low, high in bars])
    for i, (name, low, high) in enumerate(reversed(bars)):
        ax.barh(i, high - low, left=low, color="C1" if high >= low else "C0")
    ax.axvline(centre, color="k", lw=0.8)
    ax.set_yticks(range(len(bars)), [name for name, _, _ in reversed(bars)], fontsize=8)
    ax.set(xlabel=f"mean {result['response']}",
           title="Tornado: from the key's lowest to its highest value (orange: rises, blue: falls)")
    ax.title.set_fontsize(9)
    return fig
