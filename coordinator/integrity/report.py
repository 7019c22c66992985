"""The report's integrity card: the indicators the run recorded in its results file, with their thresholds, the
energy balance, the synchronization subspace and the seconds before the first crossing, as one PNG.

The crossings are read from the recorded rows (:mod:`~hybridsim.coordinator.integrity.columns`) as the monitor
compared them: the first row whose energy error, largest |TI| or largest |delay| passed its threshold.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hybridsim.coordinator.integrity.columns import BALANCE, BALANCE_TERMS, compared, crossings
from hybridsim.coordinator.integrity.rules import site_rules

BEFORE_S = 2.0
"""seconds of commands and measurements shown before the first crossing"""


BALANCE_LABELS = {"elastic": "elastic strain", "hysteretic": "hysteretic (the specimens')",
                  "residual": "residual (integrator)"}
"""the balance panel's labels (restoring, elastic + hysteretic less the transfer systems' addition, is not drawn)"""


def recorded(arrays: Mapping[str, np.ndarray], table: Mapping[str, Any], dofs: Sequence[str],
             module_dofs: Mapping[str, Sequence[str]]) -> dict[str, Any] | None:
    """The indicators of ``arrays`` (the results file's per-step datasets, up to its last completed row) under
    ``table``'s [integrity] (None without one, or a file without its indicators): per module the energy error
    (1) and |TI| (m^2); the balance (J); the crossings. ``dofs``: the structure's; ``module_dofs``: each module's
    DOF names."""
    modules = [(m["name"], m["kind"]) for m in table.get("modules", [])]
    rules = site_rules(table.get("integrity", {}), modules) if "integrity" in table else {}
    if not rules or BALANCE not in arrays:
        return None
    time = arrays["time"]
    series = {name: compared(arrays, name) for name in rules}
    found = [{"module": name, "indicator": indicator, "value": float(series[name][indicator][n]),
              "threshold": rules[name].thresholds[indicator], "step": n, "time_s": float(time[n]),
              "action": rules[name].action} for name, indicator, n in crossings(arrays, rules)]
    return {"time": time, "modules": series, "balance": dict(zip(BALANCE_TERMS, arrays[BALANCE].T)),
            "crossings": found, "rules": rules,
            "index": {name: [list(dofs).index(d) for d in module_dofs[name]] for name in rules}}


def figure_png(indicators: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> bytes:
    """Four panels: energy error with its threshold, the energy balance, the synchronization subspace and the
    command and measurement over the :data:`BEFORE_S` seconds before the first crossing (or the run's end)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = indicators["time"]
    crossing = min((c["step"] for c in indicators["crossings"]), default=t.size - 1)
    window = slice(int(np.searchsorted(t, t[crossing] - BEFORE_S)), crossing + 1)
    fig, axes = plt.subplots(3, 2, figsize=(11, 11))
    (error, balance), (subspace, before), (parameters, tracking) = axes
    for name, series in indicators["modules"].items():
        for ax, key, said in ((error, "energy_error", "E_err / E_in"), (tracking, "tracking", "|TI|")):
            ax.plot(t, series[key], label=f"{name}: {said}")
            threshold = indicators["rules"][name].thresholds.get(key)
            if threshold is not None:
                ax.axhline(threshold, ls="--", color="k", lw=0.8, label=f"{name}: threshold {threshold:g}")
        _parameters(parameters, arrays, name, (t[window][0], t[crossing]))
        command = arrays["displacement"][:, indicators["index"][name]]
        measured = arrays[f"modules/{name}/displacement"]
        subspace.plot(1e3 * command[window], 1e3 * measured[window], lw=0.8, label=name)
        before.plot(t[window], 1e3 * command[window], label=f"{name}: command")
        before.plot(t[window], 1e3 * measured[window], ls="--", label=f"{name}: measured")
    for key, series in indicators["balance"].items():
        if key != "restoring":  # (elastic + hysteretic - T)
            balance.plot(t, series, ls=":" if key == "residual" else "-", label=BALANCE_LABELS.get(key, key))
    for ax, title, xl, yl in ((error, "energy error", "t (s)", "E_err / E_in"), (balance, "energy balance", "t (s)",
                              "J"), (subspace, "synchronization subspace", "command (mm)", "measured (mm)"),
                              (before, f"the {BEFORE_S:g} s before the first crossing", "t (s)", "mm"),
                              (parameters, "compensator parameters, the same seconds", "t (s)", "(own units)"),
                              (tracking, "tracking indicator", "t (s)", "m^2")):
        ax.set(title=title, xlabel=xl, ylabel=yl)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
        else:  # (a panel with nothing to draw: the compensators of no watched site adapt)
            ax.text(0.5, 0.5, "no adaptive compensator", ha="center", va="center", transform=ax.transAxes)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    return buffer.getvalue()


def _parameters(ax: Any, arrays: Mapping[str, np.ndarray], name: str, span: tuple[float, float]) -> None:
    """Module ``name``'s compensator parameters per control sample over ``span`` (s), as its site recorded them
    (records ``compensator_parameters`` and ``sample_time``); nothing for a site without adaptive ones."""
    values = arrays.get(f"modules/{name}/records/compensator_parameters")
    times = arrays.get(f"modules/{name}/records/sample_time")
    if values is None or times is None:
        return
    shown = (times[:, 0] >= span[0]) & (times[:, 0] <= span[1])
    for j in range(values.shape[1]):  # (the record's columns: actuator i's parameter j, in order)
        ax.plot(times[shown, 0], values[shown, j], lw=0.8, label=f"{name}: parameter {j}")


def integrity_card(arrays: Mapping[str, np.ndarray], table: Mapping[str, Any], dofs: Sequence[str],
                   module_dofs: Mapping[str, Sequence[str]], stop: Mapping[str, Any] | None) -> str:
    """The report's card (HTML; empty without [integrity]): the run's stop, the recorded crossings, the figure.
    ``arrays``: the file's per-step datasets and the modules' records (``modules/<name>/records/...``)."""
    indicators = recorded(arrays, table, dofs, module_dofs)
    if indicators is None:
        return ""
    rows = "".join(f"<tr><td>{html.escape(c['module'])}</td><td>{c['indicator']}</td><td>{c['value']:.4g}</td>"
                   f"<td>{c['threshold']:.4g}</td><td>{c['step']}</td><td>{c['time_s']:.6g}</td></tr>"
                   for c in indicators["crossings"])
    said = "" if not stop or "integrity" not in stop.get("reason", "") else f"<p>{html.escape(stop['reason'])}</p>"
    png = base64.b64encode(figure_png(indicators, arrays)).decode()
    return ('<section class="card" id="report-integrity"><h2>Integrity indicators</h2>' + said
            + "<table><thead><tr><th>module</th><th>indicator</th><th>value</th><th>threshold</th><th>step</th>"
            "<th>t (s)</th></tr></thead><tbody>" + rows + "</tbody></table>"
            f'<img alt="integrity indicators" src="data:image/png;base64,{png}"></section>')
