"""What issue 35 must show on a virtual lab: an SDOF behind a first-order actuator without compensation becomes
unstable (the lag's negative damping), [integrity] holds its site's gate near the step the closed form gives and
before the stroke limit; compensated by the lag, the same threshold is never crossed.

The closed form (docs/integrity.md): a lag tau takes w tau / 2 off the damping ratio, so a free vibration grows
as A0 exp(sigma t), sigma = w (w tau / 2 - zeta). The transfer system adds pi k A^2 sin(w tau) a cycle, i.e.
k w sin(w tau) A^2 / 2 a second; over the input E_in = m (w A0)^2 / 2 of a velocity pulse,

    E_err / E_in = w sin(w tau) (exp(2 sigma t) - 1) / (2 sigma)

crosses a threshold theta at t* = ln(1 + 2 sigma theta / (w sin(w tau))) / (2 sigma), and the stroke S is reached
at ln(S / A0) / sigma.
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.monitor.report import report_html
from hybridsim.coordinator.recorder import read_attributes
from hybridsim.coordinator.simulation import run_experiment

M, F, ZETA, DT, BANDWIDTH, SAMPLE = 1000.0, 3.5, 0.02, 0.005, 125.0, 0.001
"""kg, Hz, 1, s (the coordinator's step), rad/s (the actuator a / (s + a)), s (the site's control sample)"""
W = 2 * math.pi * F
ALPHA = math.exp(-BANDWIDTH * SAMPLE)
TAU = ALPHA * SAMPLE / (1 - ALPHA)
"""7.51 ms: the low-frequency lag of x_k+1 = alpha x_k + (1 - alpha) u_k read a sample after its command"""
PULSE, STROKE, THETA = 8.8, 0.05, 20.0
"""m/s^2 over one step (v0 = 0.044 m/s, A0 = v0 / w = 2.0 mm); m; E_err / E_in"""


def lagging_sdof(tmp_path: Path, name: str, compensator: dict[str, Any], integrity: dict[str, Any],
                 **more: Any) -> Any:
    """The SDOF on a virtual lab (in process, or on a site daemon at ``more["address"]``), hit by one step of ground
    acceleration at t = dt; ``more["checkpoint_every"]``: steps between checkpoints; ``more["duration"]``: s."""
    duration = more.get("duration", 1.5)
    ground = np.zeros(int((duration + 0.5) / DT) + 1)
    ground[1] = -PULSE
    record = tmp_path / f"{name}.csv"
    record.write_text("time_s,accel_m_s2\n" + "".join(f"{i * DT:.3f},{g}\n" for i, g in enumerate(ground)))
    site = {"dt": SAMPLE, "setup": {"kind": "one-actuator", "dof": "x"},
            "actuators": [{"stroke": STROKE, "force": 1e5, "compensator": compensator}],
            "backend": {"plant": {"dt": SAMPLE, "dofs": ["actuator"],
                                  "actuators": [{"model": "first-order", "bandwidth": BANDWIDTH}],
                                  "specimen": {"kind": "spring", "law": "linear", "stiffness": M * W * W}}}}
    return parse_experiment({
        "experiment": {"name": name, "dt": DT, "duration": duration},
        "structure": {"dofs": ["x"], "mass_diagonal": [M], "influence": [1.0],
                      "damping": {"matrix": [[2 * ZETA * M * W]]}},
        "ground_motion": {"file": str(record)}, "integrator": {"kind": "alpha-os", "alpha": 0.0},
        "modules": [{"name": "column", "kind": "experimental", "config": site,
                     **({"address": more["address"]} if "address" in more else {})}],
        "integrity": integrity, "output": {"file": str(tmp_path / f"{name}.h5"),
                                           "checkpoint_every": more.get("checkpoint_every", 0)}},
        base_dir=tmp_path)


def crossing_step() -> tuple[int, int]:
    """The closed form's steps: the energy error crossing THETA, the stroke reached."""
    sigma = W * (W * TAU / 2 - ZETA)
    t_cross = math.log(1 + 2 * sigma * THETA / (W * math.sin(W * TAU))) / (2 * sigma)
    t_stroke = math.log(STROKE / (PULSE * DT / W)) / sigma
    return round(t_cross / DT), round(t_stroke / DT)


def test_an_uncompensated_lag_is_held_near_the_closed_form_step(tmp_path: Path) -> None:
    """Closed form: step 202 (1.01 s) and the stroke at step 468; measured: held at about step 221. The closed
    form is first order in w tau = 0.165 and takes the actuator for a pure delay: the first-order actuator's own
    characteristic root grows at 1.296/s against the closed form's 1.376/s (6 %), hence 15 %."""
    predicted, stroke = crossing_step()
    experiment = lagging_sdof(tmp_path, "held", {"kind": "none"}, {"energy_error": THETA, "action": "hold"})
    with pytest.raises(RunStopped, match="held since integrity: column's energy error") as stopped:
        run_experiment(experiment)
    stop = json.loads(read_attributes(tmp_path / "held.h5")["stop"])
    held = int(stop["step"]) - 1  # the hold is set after the crossing step; the gate refuses the next
    print(f"energy error {THETA} crossed at step {held}, closed form {predicted}; stroke at {stroke}")
    assert abs(held - predicted) < 0.15 * predicted, (held, predicted)
    assert held < stroke and "integrity: column's energy error" in stop["cause"], stopped.value
    with h5py.File(tmp_path / "held.h5") as f:  # the indicators' rows end with the steps', at the crossing
        assert np.abs(f["displacement"][()]).max() < 0.2 * STROKE
        energy_error = f["integrity/modules/column/energy_error"][()]
        assert energy_error.size == f["time"].size == held + 1 and f["integrity/balance"].shape[0] == held + 1
        assert energy_error[held] > THETA >= energy_error[held - 1]
    page = report_html(tmp_path / "held.h5")  # the card reads the recorded indicators: the run's own crossing
    card = page[page.index('id="report-integrity"'):]
    assert stop["reason"] in html.unescape(card) and "data:image/png;base64," in card
    recorded = re.search(r"<td>energy_error</td><td>[^<]*</td><td>20</td><td>(\d+)</td>", card)
    assert recorded is not None and int(recorded.group(1)) == held, card[:600]


def test_compensated_by_the_lag_the_threshold_is_never_crossed(tmp_path: Path) -> None:
    """The polynomial compensator extrapolating by TAU restores the damping: the run completes, no crossing."""
    compensator = {"kind": "polynomial", "order": 2, "delay": TAU, "sample_period": SAMPLE}
    result = run_experiment(lagging_sdof(tmp_path, "compensated", compensator,
                                         {"energy_error": THETA, "action": "stop"}))
    figures = result.summary["integrity"]
    assert figures["crossings"] == [] and abs(figures["modules"]["column"]["energy_error"]) < 1.0
    assert abs(figures["balance_j"]["residual"]) < 1e-6 * figures["balance_j"]["input"]


def test_a_stop_ends_the_run_with_the_indicator_value_and_step(tmp_path: Path) -> None:
    """action = "stop" at a tenth of the threshold: the run ends at the crossing, its status names it."""
    with pytest.raises(RunStopped, match="integrity: column's energy error"):
        run_experiment(lagging_sdof(tmp_path, "stopped", {"kind": "none"}, {"energy_error": 2.0, "action": "stop"}))
    attrs = read_attributes(tmp_path / "stopped.h5")
    stop = json.loads(attrs["stop"])
    assert stop["module"] == "column" and "passed its threshold 2 at step" in stop["reason"]
    assert f"at step {stop['step'] - 1}" in attrs["status"] and stop["step"] < crossing_step()[0]
