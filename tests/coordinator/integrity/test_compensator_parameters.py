"""The compensator's parameters in the seconds before a crossing: the lagging SDOF of test_hold.py behind an
RLS-AC compensator (Quiroz, Galmez & Fermandois 2024) that starts from no compensation (taps 1, 0, 0, 0) and
adapts. Its site records the taps at every control sample beside the commands (the same streamed records); the
report's card plots them over the 2 s before |TI| passes its threshold."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import numpy as np
import scipy.signal

from hybridsim.coordinator.monitor.report import report_html
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.experimental.compensators.rls import RlsCompensator
from tests.coordinator.integrity.test_hold import SAMPLE, lagging_sdof

B, A = scipy.signal.butter(4, 20.0, fs=1.0 / SAMPLE)
"""the RLS-AC's low-pass on command and measurement: 4th-order Butterworth at 20 Hz"""
RLS = {"kind": "rls", "theta0": [1.0, 0.0, 0.0, 0.0], "p0": (1e4 * np.eye(4)).tolist(), "filter_b": B.tolist(),
       "filter_a": A.tolist(), "forgetting": 1.0}
TRACKING = 8.5e-7
"""|TI| (m^2) of the warning: the adapting compensator leads the actuator, TI grows negative past it near 0.7 s"""


def test_the_card_shows_the_compensators_taps_before_the_crossing(tmp_path: Path) -> None:
    """The taps recorded at sample k are the ones that made command k: a compensator of the same table fed the
    recorded target and measurement of every sample gives every recorded command and taps bit for bit."""
    run_experiment(lagging_sdof(tmp_path, "adapting", RLS, {"tracking": TRACKING, "action": "warn"}))
    data = read_results(tmp_path / "adapting.h5")
    records = {k.rsplit("/", 1)[-1]: v for k, v in data.items() if k.startswith("modules/column/records/")}
    taps, targets, measured, commands = (records[k] for k in ("compensator_parameters", "target_strokes",
                                                              "measured_strokes", "commands"))
    oracle = RlsCompensator.from_config({k: v for k, v in RLS.items() if k != "kind"})
    for k in range(commands.shape[0] - 1):  # (the last sample ends the run: no command is computed at it)
        assert oracle.command(targets[k, 0], measured[k, 0]) == commands[k, 0], k
        np.testing.assert_array_equal(taps[k], oracle.parameters())
    assert np.array_equal(taps[-1], taps[-2]) and np.abs(taps[-1] - RLS["theta0"]).max() > 1.0  # held; adapted
    page = report_html(tmp_path / "adapting.h5")
    card = page[page.index('id="report-integrity"'):]
    crossed = re.search(r"<td>tracking</td><td>[^<]*</td><td>8.5e-07</td><td>(\d+)</td>", card)
    assert crossed is not None and 20 < int(crossed.group(1)) < 300, card[:600]
    png = base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', card).group(1))
    (tmp_path / "card.png").write_bytes(png)
