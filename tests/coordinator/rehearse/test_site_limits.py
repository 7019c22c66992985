"""The rehearsal's limits are the site's own: none declared is no sign-off, and a gate increment's envelope is
the one the gate measures (the gate itself, driving the same trial, is the oracle)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hybridsim.coordinator.problems.marths import loop, parts
from hybridsim.modules.experimental.gate import ActuatorLimitExceeded
from hybridsim.modules.experimental.module import build_site

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
DURATION = 3.0
"""s of El Centro each trial runs (its strong motion begins after about 1 s)"""


def rehearse(tmp_path: Path, gate: dict | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """The shipped experiment (the nominal plant only, DURATION s) with ``gate`` added to its site, if given."""
    shutil.copy(EXAMPLES / "marths.toml", tmp_path)
    shutil.copytree(EXAMPLES / "marths", tmp_path / "marths")
    with (tmp_path / "marths.toml").open("a") as f:
        f.write(f"\n[rehearse]\ntrials = 1\nduration = {DURATION}\ngain_margin = false\ndelay_margin = false\n")
    if gate is not None:
        site = json.loads((tmp_path / "marths" / "site.json").read_text())
        site["gate"] = gate
        (tmp_path / "marths" / "site.json").write_text(json.dumps(site))
    proc = subprocess.run([sys.executable, "-m", "hybridsim", "rehearse", str(tmp_path / "marths.toml"),
                           "--out", str(tmp_path / "sheet")],
                          capture_output=True, text=True, timeout=120)
    return proc, json.loads((tmp_path / "sheet" / "rehearsal.json").read_text())


TRIALS = loop.trial_specs(loop.RunSpec(plant="uncertain", duration=DURATION), 1)
"""the rehearsal's trials: the nominal plant and one drawn from the benchmark's uncertainty"""


def gate_stops(spec: loop.RunSpec, increment: list[float]) -> bool:
    """Whether the site's gate, with ``increment`` (m, per actuator), stops the trial ``spec``."""
    config = loop.site_config(spec)
    config["gate"] = {"increment": increment}
    lab = parts.lab(spec.plant, spec.plant_seed, spec.noise, spec.noise_seed, spec.shared_noise)
    try:
        loop.simulate(spec, loop.InProcessSide(build_site(config, lab), iterative=False))
    except ActuatorLimitExceeded:
        return True
    return False


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    return rehearse(tmp_path_factory.mktemp("shipped"))


def test_a_site_without_limits_is_not_signed_off(shipped):
    proc, sheet = shipped
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("NO-GO: no limits declared at site 'lab'")
    assert sheet["limits"] == []  # the envelopes are still there, without a limit to set them against
    assert len(sheet["peaks"]["actuators.stroke"]["max"]) == 2 and len(sheet["peaks"]["limits.force"]["max"]) == 3


def test_the_gate_increment_envelope_is_the_gates_and_its_breach_names_limit_and_trial(tmp_path, shipped):
    peaks = shipped[1]["peaks"]["gate.increment"]["max"]
    # the gate, driving the same trials: each passes 1 % above the largest peaks the sheet reports; 1 % under
    # actuator 1's, the gate stops at least one, and the sheet names the first of them
    assert not any(gate_stops(spec, [1.01 * p for p in peaks]) for spec in TRIALS)
    stopped = [i for i, spec in enumerate(TRIALS) if gate_stops(spec, [0.99 * peaks[0], 1.01 * peaks[1]])]
    assert stopped
    proc, sheet = rehearse(tmp_path, {"increment": [0.99 * peaks[0], 1.01 * peaks[1]]})
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("NO-GO: gate.increment at actuator 1 = ")
    assert f"exceeded in {sheet['trials'][stopped[0]]}" in proc.stdout
    assert [r["probability"] for r in sheet["limits"]] == [len(stopped) / 2, 0.0]
