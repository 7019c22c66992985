"""The rehearsal's sheet: GO or NO-GO and why, as JSON and as an HTML page.

NO-GO when a trial's peak exceeds one of the site's limits: the sheet names the first such limit and trial
(every one is in its rows); NO-GO too when the site declares no limit the trials measure (nothing to sign off).  Beside the verdict: each limit's envelope and probability of exceeding, the limits
the trials cannot check (a quantity the run does not log), per actuator the peak command velocity and the
hydraulic flow it implies (Q = A v, A the piston area when declared), the tracking error and the benchmark's
J criteria over the trials (min, mean, max).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def verdict(rows: Sequence[dict[str, Any]], stopped: Sequence[tuple[str, str]] = (),
            site: str = "the site") -> tuple[str, str]:
    """("GO" | "NO-GO", why): ``stopped`` the trials a guard or divergence stopped, with why; ``site`` names the
    site in the why.  A site that declares no limit, or none the trials measure, is not signed off: a GO says
    every limit the gate will enforce held, and there is none to hold."""
    if stopped:
        return "NO-GO", f"{stopped[0][0]} stopped: {stopped[0][1]}"
    for row in rows:
        if row["exceeded_in"]:
            return "NO-GO", (f"{row['limit']} = {row['value']:.6g} {row['unit']} exceeded in {row['exceeded_in'][0]} "
                             f"(peak {max(p for p in row['peaks'] if p is not None):.6g}, probability "
                             f"{row['probability']:.2f})")
    if not rows:
        return "NO-GO", (f"no limits declared at {site}: nothing to sign the test off against (declare the limits "
                         "its gate enforces: limits.displacement/velocity/force, gate.increment/velocity, an "
                         "actuator's stroke/force; the sheet has the envelopes)")
    checked = [row for row in rows if row["measured"]]
    if not checked:
        return "NO-GO", f"no limit declared at {site} is measured by the trials: {', '.join(r['limit'] for r in rows)}"
    worst = max(checked, key=lambda row: row["ratio"])
    ran = len(worst["peaks"])
    held = "the only trial run" if ran == 1 else f"all {ran} trials run"
    return "GO", f"every limit held in {held}; the closest: {worst['limit']} at {100 * worst['ratio']:.3g} %"


def _std(array: np.ndarray, axis: int) -> np.ndarray:
    """The sample standard deviation over trials (0 for one trial)."""
    return np.std(array, axis=axis, ddof=1) if array.shape[0] > 1 else np.zeros(array.shape[1])


def distribution(values: Sequence[Sequence[float]]) -> dict[str, list]:
    """min, mean, sample standard deviation and max over trials of each component of a vector figure, and every
    trial's value (``trials``: one list per trial); None where a trial's is not finite (a criterion over a zero
    reference)."""
    array = np.asarray(values, dtype=float)
    finite = np.all(np.isfinite(array), axis=0)
    with np.errstate(invalid="ignore"):  # a component not finite in a trial is shown as None, not computed on
        shown = {name: [float(v) if ok else None for v, ok in zip(reduce(array, axis=0), finite)]
                 for name, reduce in (("min", np.min), ("mean", np.mean), ("std", _std), ("max", np.max))}
    return {**shown, "trials": [[float(v) if np.isfinite(v) else None for v in row] for row in array]}


def write(sheet: dict[str, Any], folder: Path) -> tuple[Path, Path]:
    """rehearsal.json and rehearsal.html in ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path, html_path = folder / "rehearsal.json", folder / "rehearsal.html"
    json_path.write_text(json.dumps(sheet, indent=1) + "\n")
    html_path.write_text(page(sheet))
    return json_path, html_path


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = lambda tag, row: "".join(f"<{tag}>{html.escape(_shown(v))}</{tag}>" for v in row)  # noqa: E731
    return ("<table><tr>" + cells("th", header) + "</tr>"
            + "".join("<tr>" + cells("td", row) + "</tr>" for row in rows) + "</table>")


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return ", ".join(_shown(v) for v in value)
    return "-" if value is None else str(value)


def margin_lines(sheet: dict[str, Any]) -> list[str]:
    """The sheet's margins in words: the maRTHS nominal trial's (a loss of plant gain, whole samples of delay at
    a tracking bound) or a virtual-lab site's (a gain factor and a delay in s at which its loop stays stable)."""
    gain, delay = sheet["gain_margin"], sheet["delay_margin"]
    if not gain:
        lines = ["gain margin: not sought (rehearse.gain_margin = false)"]
    elif isinstance(gain, list):  # one per virtual-lab site
        lines = [f"gain margin (site {g['site']!r}): its loop stays stable with its actuators' gain up to "
                 f"{g['factor']:.4g} times " + ("at least (the top of rehearse.gain_margin_bracket: raise it)"
                                                if g["above_bracket"] else f"(to {g['tolerance']:.3g})") for g in gain]
    else:
        lines = [f"gain margin ({gain['trial']}): completes with up to {100 * gain['loss']:.1f} % of the plant's "
                 f"gain lost (to {100 * gain['tolerance']:.1f} %)"]
    if not delay:
        lines.append("delay margin: not sought (rehearse.delay_margin = false)")
    elif isinstance(delay, list):
        lines += [f"delay margin (site {d['site']!r}): its loop stays stable with up to {1e3 * d['s']:.4g} ms added "
                  "to its actuators' delay " + ("at least (the top of rehearse.delay_margin_bracket: raise it)"
                                                if d["above_bracket"] else f"(to {1e3 * d['tolerance_s']:.3g} ms)")
                  for d in delay]
    else:
        lines.append(f"delay margin ({delay['trial']}): tracks within {delay['tracking_percent']:.3g} % with up to "
                     f"{delay['samples']} samples ({1e3 * delay['s']:.2f} ms) added to the actuators' delay")
    return lines


def _site_lines(sheet: dict[str, Any]) -> list[str]:
    """Each virtual-lab site's own verdict, when the experiment has several."""
    sites = sheet.get("sites", [])
    return [f"site {s['site']!r}: {s['verdict']}: {s['why']}" for s in sites] if len(sites) > 1 else []


def page(sheet: dict[str, Any]) -> str:
    """The sheet as one self-contained HTML page."""
    colour = "#1a7f37" if sheet["verdict"] == "GO" else "#b42318"
    limits = _table(["limit", "value", "unit", "max peak", "of the limit", "P(exceed)", "exceeded in"],
                    [[r["limit"], r["value"], r["unit"], r["max"], r["ratio"], r["probability"], r["exceeded_in"]]
                     for r in sheet["limits"]])
    actuators = _table(["actuator", "peak stroke (m)", "peak command velocity (m/s)", "flow (m^3/s)",
                        "tracking RMS (%)", "tracking peak (m)"],
                       [[a.get("name", f"actuator {i + 1}"), a["stroke"]["max"], a["velocity"]["max"],
                         a["flow"] and a["flow"]["max"],
                         a["tracking_rms_percent"]["max"], a["tracking_peak"]["max"]]
                        for i, a in enumerate(sheet["actuators"])])
    peaks = _table(["quantity (site's key)", "min", "mean", "std", "max"],
                   [[name, d["min"], d["mean"], d["std"], d["max"]] for name, d in sheet["peaks"].items()])
    criteria = _table(["criterion", "min", "mean", "std", "max"],
                      [[name, d["min"], d["mean"], d["std"], d["max"]] for name, d in sheet["criteria"].items()])
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Rehearsal of {html.escape(sheet['experiment'])}"
            "</title><style>body{font-family:sans-serif;margin:2em}td,th{border:1px solid #ccc;padding:.2em .5em}"
            "table{border-collapse:collapse;margin-bottom:1.5em}</style></head><body>"
            f"<h1 style='color:{colour}'>{sheet['verdict']}</h1><p>{html.escape(sheet['why'])}</p>"
            f"<p>Trials run ({len(sheet['trials'])}): {html.escape(', '.join(sheet['trials']))}. Not checked: "
            f"{html.escape(', '.join(sheet['unchecked']) or 'none')}.</p>"
            + "".join(f"<p>{html.escape(line)}</p>" for line in margin_lines(sheet) + _site_lines(sheet)) +
            f"<h2>Limits</h2>{limits}<h2>Peaks over trials, per DOF or actuator</h2>{peaks}<h2>Actuators (max over trials)</h2>{actuators}"
            f"<h2>Criteria over trials</h2>{criteria}</body></html>\n")
