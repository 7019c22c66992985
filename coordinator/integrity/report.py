"""The report's integrity card: the indicators over the run replayed from its results file, with their thresholds,
the energy balance, the synchronization subspace and the seconds before the first crossing, as one PNG.

The replay feeds the file's rows to :class:`~hybridsim.coordinator.integrity.monitor.IntegrityMonitor` (every action
a warning), so the figures are the monitor's but for the command: the file keeps the committed displacement, not
the trial sent (under alpha-OS they differ by beta dt^2 a_n+1, O(dt^2)), so the replayed crossing may differ from
the run's by a step or so; the run's own crossing is in its status and summary.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hybridsim.coordinator.integrity.energy import StrainEnergy
from hybridsim.coordinator.integrity.monitor import IntegrityMonitor, Watched
from hybridsim.coordinator.integrity.rules import site_rules

BEFORE_S = 2.0
"""seconds of commands and measurements shown before the first crossing"""


BALANCE_LABELS = {"elastic": "elastic strain", "hysteretic": "hysteretic (less a transfer system's addition)",
                  "residual": "residual (integrator)"}


@dataclasses.dataclass
class _Model:
    """The structure as the file keeps it: M, C (model/mass, model/damping) and -M r."""

    mass: np.ndarray
    damping: np.ndarray
    influence: np.ndarray

    def load_shape(self) -> np.ndarray:
        return -(self.mass @ self.influence)


@dataclasses.dataclass
class _Sent:
    """The replay's stand-in for the partition: the committed displacement of the row as the command."""

    sent: np.ndarray


def replay(arrays: Mapping[str, np.ndarray], table: Mapping[str, Any], dofs: Sequence[str],
           module_dofs: Mapping[str, Sequence[str]]) -> dict[str, Any] | None:
    """The indicators at every row of ``arrays`` (the results file's, up to its last completed row) under
    ``table``'s [integrity] (None without one): per module the energy error (1), |TI| (m^2), command and
    measurement (m); the balance (J); the replayed crossings. ``dofs``: the structure's; ``module_dofs``: each
    module's DOF names."""
    modules = [(m["name"], m["kind"]) for m in table.get("modules", [])]
    rules = site_rules(table.get("integrity", {}), modules) if "integrity" in table else {}
    if not rules or "model/mass" not in arrays:
        return None
    index = {name: [list(dofs).index(d) for d in names] for name, names in module_dofs.items()}
    dt = float(arrays["time"][1] - arrays["time"][0]) if arrays["time"].size > 1 else 1.0
    watched = [Watched(name, np.asarray(index[name]), dataclasses.replace(rule, action="warn"), dt)
               for name, rule in rules.items()]
    influence = np.asarray(table["structure"].get("influence", [1.0] * len(dofs)), float)
    sent = _Sent(np.zeros(len(dofs)))
    strain = StrainEnergy.of(arrays["model/initial_stiffness"], [np.asarray(i) for i in index.values()])
    monitor = IntegrityMonitor(watched, sent, _Model(arrays["model/mass"], arrays["model/damping"], influence),
                               strain, lambda *_: None, say=lambda _: None)  # the run said its crossings
    rows = arrays["time"].size
    out: dict[str, Any] = {"time": arrays["time"], "modules": {w.name: {"energy_error": np.zeros(rows),
                                                                         "tracking": np.zeros(rows)} for w in watched},
                           "balance": {k: np.zeros(rows) for k in ("input", "kinetic", "damped", "elastic", "hysteretic",
                                                                   "residual")}}
    for n in range(rows):
        sent.sent = arrays["displacement"][n]
        (monitor.begin if n == 0 else monitor)(n, arrays)
        for site in watched:
            values = site.values(monitor.balance.input)
            out["modules"][site.name]["energy_error"][n] = values["energy_error"]
            out["modules"][site.name]["tracking"][n] = values["tracking"]
        for key, series in out["balance"].items():
            series[n] = getattr(monitor.balance, key)
    out["crossings"], out["rules"], out["index"] = monitor.crossings, rules, index
    return out


def figure_png(replayed: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> bytes:
    """Four panels: energy error with its threshold, the energy balance, the synchronization subspace and the
    command and measurement over the :data:`BEFORE_S` seconds before the first crossing (or the run's end)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = replayed["time"]
    crossing = min((c["step"] for c in replayed["crossings"]), default=t.size - 1)
    window = slice(int(np.searchsorted(t, t[crossing] - BEFORE_S)), crossing + 1)
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    (error, balance), (subspace, before) = axes
    for name, series in replayed["modules"].items():
        error.plot(t, series["energy_error"], label=f"{name}: E_err / E_in")
        threshold = replayed["rules"][name].thresholds.get("energy_error")
        if threshold is not None:
            error.axhline(threshold, ls="--", color="k", lw=0.8, label=f"{name}: threshold {threshold:g}")
        command = arrays["displacement"][:, replayed["index"][name]]
        measured = arrays[f"modules/{name}/displacement"]
        subspace.plot(1e3 * command[window], 1e3 * measured[window], lw=0.8, label=name)
        before.plot(t[window], 1e3 * command[window], label=f"{name}: command")
        before.plot(t[window], 1e3 * measured[window], ls="--", label=f"{name}: measured")
    for key, series in replayed["balance"].items():
        balance.plot(t, series, ls=":" if key == "residual" else "-", label=BALANCE_LABELS.get(key, key))
    for ax, title, xl, yl in ((error, "energy error", "t (s)", "E_err / E_in"), (balance, "energy balance", "t (s)",
                              "J"), (subspace, "synchronization subspace", "command (mm)", "measured (mm)"),
                              (before, f"the {BEFORE_S:g} s before the first crossing", "t (s)", "mm")):
        ax.set(title=title, xlabel=xl, ylabel=yl)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    return buffer.getvalue()


def integrity_card(arrays: Mapping[str, np.ndarray], table: Mapping[str, Any], dofs: Sequence[str],
                   module_dofs: Mapping[str, Sequence[str]], stop: Mapping[str, Any] | None) -> str:
    """The report's card (HTML; empty without [integrity]): the run's stop, the replayed crossings, the figure."""
    replayed = replay(arrays, table, dofs, module_dofs)
    if replayed is None:
        return ""
    rows = "".join(f"<tr><td>{html.escape(c['module'])}</td><td>{c['indicator']}</td><td>{c['value']:.4g}</td>"
                   f"<td>{c['threshold']:.4g}</td><td>{c['step']}</td><td>{c['time_s']:.6g}</td></tr>"
                   for c in replayed["crossings"])
    said = "" if not stop or "integrity" not in stop.get("reason", "") else f"<p>{html.escape(stop['reason'])}</p>"
    png = base64.b64encode(figure_png(replayed, arrays)).decode()
    return ('<section class="card" id="report-integrity"><h2>Integrity indicators</h2>' + said
            + "<table><thead><tr><th>module</th><th>indicator</th><th>value</th><th>threshold</th><th>step</th>"
            "<th>t (s)</th></tr></thead><tbody>" + rows + "</tbody></table>"
            f'<img alt="integrity indicators" src="data:image/png;base64,{png}"></section>')
