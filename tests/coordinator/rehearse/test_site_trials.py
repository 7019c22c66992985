"""`hybridsim rehearse` of an experiment other than maRTHS: the examples' one-actuator column (a virtual lab with a
bilinear column behind a first-order actuator), its trials ordinary runs of the campaign runner.

Checks against what the rehearsal does not compute: the actuator is in line with the tested DOF, so its peak
command is the interface's peak displacement up to the compensator's error (a few per cent); and a stroke limit
just under a trial's peak is the site's own gate's to enforce: the trial stops there, and the sheet says NO-GO
naming that trial and the gate's words.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SETUPS = Path(__file__).resolve().parents[3] / "examples" / "setups"
DURATION = 7.5
"""s of the record (El Centro's first 5 s are zero; its strong motion follows)"""
AREA = 5e-3
"""m^2: the piston area declared, for the flow Q = A v"""
RANDOM = '[rehearse.random."ground_motion.scale"]\ndistribution = "normal"\nmean = 0.6\nstd = 0.06\n'


def rehearse(folder: Path, random: bool, stroke: float | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """The example with [rehearse] (with ``random``, one more trial drawing the record's scale; without, trial 0
    alone, its trials left to the default) and, if given, the actuator's stroke limit set to ``stroke`` (m)."""
    for name in ("one_actuator.toml", "one_actuator_site.toml"):
        shutil.copy(SETUPS / name, folder)
    with (folder / "one_actuator.toml").open("a") as f:
        f.write(f"\n[rehearse]\n{'trials = 1' if random else ''}\nduration = {DURATION}\npiston_area = {AREA}\n"
                "gain_margin = false\ndelay_margin = false\n" + (RANDOM if random else ""))
    if stroke is not None:
        site = folder / "one_actuator_site.toml"
        site.write_text(site.read_text().replace("stroke = 0.1\n", f"stroke = {stroke!r}\n"))
    proc = subprocess.run([sys.executable, "-m", "hybridsim", "rehearse", str(folder / "one_actuator.toml"),
                           "--out", str(folder / "sheet")], capture_output=True, text=True, timeout=120)
    return proc, json.loads((folder / "sheet" / "rehearsal.json").read_text())


@pytest.fixture(scope="module")
def drawn(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    return rehearse(tmp_path_factory.mktemp("drawn"), True)


def test_go_with_the_declared_limits_and_the_drawn_scales(drawn):
    proc, sheet = drawn
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("GO: every limit held in all 2 trials run; the closest: actuators.stroke at actuator 1")
    assert sheet["trials"][0] == "trial 0 (as written)" and sheet["trials"][1].startswith("trial 1 (ground_motion"
                                                                                           ".scale = ")
    assert [r["limit"] for r in sheet["limits"]] == ["actuators.stroke at actuator 1", "actuators.force at actuator 1"]
    peaks = sheet["peaks"]
    assert peaks["actuators.stroke"]["max"][0] == pytest.approx(peaks["limits.displacement"]["max"][0], rel=0.03)
    # the command's velocity over the control sample is the interface's over the step (the command interpolates
    # between steps), within the compensator's extrapolation and the stroke sensor's noise (5 %)
    actuator = sheet["actuators"][0]
    assert actuator["velocity"]["max"][0] == pytest.approx(peaks["limits.velocity"]["max"][0], rel=0.05)
    assert actuator["flow"]["max"][0] == pytest.approx(AREA * actuator["velocity"]["max"][0], rel=1e-12)


def test_a_stroke_limit_under_the_peak_is_stopped_by_the_gate_and_named(tmp_path, drawn):
    peak = drawn[1]["limits"][0]["peaks"][0]
    proc, sheet = rehearse(tmp_path, False, stroke=0.99 * peak)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("NO-GO: trial 0 (as written) stopped: ")
    assert "actuator 1: command" in proc.stdout and "beyond its limit" in proc.stdout
    assert sheet["trials"] == ["trial 0 (as written)"]
    assert sheet["why"].endswith("; trial 0 (as written) alone ran: no [rehearse.random] is declared, so drawn "
                                 "trials would equal it")


@pytest.mark.parametrize("asked", [["--trials", "2"], []])
def test_trials_asked_without_random_draws_are_refused_in_one_line(tmp_path, asked):
    """Drawn trials without [rehearse.random] would each equal trial 0: a sign-off must not claim them, so the
    command refuses (exit 2) before any run, whether --trials or [rehearse] trials asks for them."""
    for name in ("one_actuator.toml", "one_actuator_site.toml"):
        shutil.copy(SETUPS / name, tmp_path)
    if not asked:
        with (tmp_path / "one_actuator.toml").open("a") as f:
            f.write("\n[rehearse]\ntrials = 2\n")
    proc = subprocess.run([sys.executable, "-m", "hybridsim", "rehearse", str(tmp_path / "one_actuator.toml"),
                           "--out", str(tmp_path / "sheet"), *asked], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "" and not (tmp_path / "sheet").exists()
    assert proc.stderr.count("\n") == 1 and "2 drawn trial(s) asked for but no [rehearse.random]" in proc.stderr
    assert "declare [rehearse.random]" in proc.stderr and "drop --trials and rehearse.trials" in proc.stderr
