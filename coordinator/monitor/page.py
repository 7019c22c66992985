"""The monitor page as one self-contained HTML document: uPlot, the plotting script and the styles inline."""

from __future__ import annotations

import html
import json
from functools import cache
from importlib import resources
from typing import Any

STATIC = resources.files("hybridsim.coordinator.monitor") / "static"


@cache
def _static(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def _script_safe(text: str) -> str:
    """Text that cannot end the <script> element it sits in."""
    return text.replace("</", "<\\/")


REPORT_MAIN = """
const run = JSON.parse(document.getElementById("run-data").textContent);
hybridsimMonitor.reset(run.info);
for (const frame of run.frames) hybridsimMonitor.addFrame(frame);
hybridsimMonitor.redraw();
"""


def render_page(*, title: str, live: bool, payload: dict[str, Any] | None = None, sections: str = "",
                banner: str = "") -> str:
    """The page: live (frames from /events, controls) or a report (``payload``: info and frames, embedded).

    ``sections`` is trusted HTML placed after the plots (the report's tables); ``banner`` trusted HTML
    at the top, under the header (why a run stopped).
    """
    parts = {
        "<!--TITLE-->": html.escape(title),
        "<!--MODE-->": "live" if live else "report",
        "<!--UPLOT_CSS-->": _static("uPlot.min.css"),
        "<!--MONITOR_CSS-->": _static("monitor.css"),
        "<!--SECTIONS-->": sections,
        "<!--BANNER-->": banner,
        "<!--UPLOT_JS-->": _script_safe(_static("uPlot.iife.min.js")),
        "<!--MONITOR_JS-->": _script_safe(_static("monitor.js")),
        "<!--PAYLOAD-->": "" if payload is None else
        f'<script type="application/json" id="run-data">{_script_safe(json.dumps(payload, allow_nan=False))}</script>',
        "<!--MAIN_JS-->": _script_safe(_static("live.js") if live else REPORT_MAIN),
    }
    page = _static("monitor.html")
    for marker, text in parts.items():
        page = page.replace(marker, text)
    return page
