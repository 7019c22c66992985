"""`hybridsim rehearse` of an experiment with two virtual-lab sites: each site's envelopes, verdict and margins,
named by its site.

Two uncoupled delayed springs (the loop of examples/delayed_spring.toml twice, on DOFs x1 and x2; damping 400 and
800 N*s/m), each behind its own lab's pure 3 ms delay: each site's margins are its own loop's closed forms
(hybridsim.coordinator.rehearse.delayed_sdof), tau* = 6.6716 and 13.373 ms, whatever the other site does, since
the DOFs do not couple; one site's knob is turned at a time (docs/rehearse.md).  Tolerances as in
test_site_margins.py: the bisection's below, (w* dt)^2 of the closed form either side.
"""

from __future__ import annotations

import html
import json
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.optimize import brentq

from hybridsim.coordinator.rehearse.delayed_sdof import DelayedSpringSdof

M, K_N, K_E, TAU_0, DT = 1000.0, 4.0e4, 6.0e4, 0.003, 0.002
DAMPING = {"left": 400.0, "right": 800.0}
"""N*s/m of each site's DOF (x1, x2)"""


def site(name: str, dof: str, limits: bool) -> str:
    return f"""
[[modules]]
name = "{name}"
kind = "experimental"

[modules.config]
dt = {DT}
setup = {{ kind = "none", dofs = ["{dof}"] }}
actuators = [{{ {"stroke = 0.1" if limits else ""} }}]

[modules.config.backend.plant]
dt = {DT}
dofs = ["actuator"]
actuators = [{{ model = "ideal", delay = {TAU_0} }}]

[modules.config.backend.plant.specimen]
kind = "spring"
law = "linear"
stiffness = {K_E}
"""


def rehearse(folder: Path, rehearse_table: str, right_limits: bool) -> tuple[subprocess.CompletedProcess, dict]:
    text = f"""[experiment]
name = "two_sites"
dt = {DT}
duration = 10.0

[structure]
dofs = ["x1", "x2"]
mass_diagonal = [{M}, {M}]
damping = {{ matrix = [[{DAMPING['left']}, 0.0], [0.0, {DAMPING['right']}]] }}
influence = [1.0, 1.0]

[ground_motion]
file = "hybridsim:marths/ground_motion_elcentro.csv"
scale = 0.3

[integrator]
kind = "central-difference"

[[modules]]
name = "frame"
kind = "linear"
config = {{ dofs = ["x1", "x2"], stiffness = [[{K_N}, 0.0], [0.0, {K_N}]] }}
{site("left", "x1", True)}{site("right", "x2", right_limits)}
{rehearse_table}
"""
    (folder / "two_sites.toml").write_text(text)
    proc = subprocess.run([sys.executable, "-m", "hybridsim", "rehearse", str(folder / "two_sites.toml"), "--out",
                           str(folder / "sheet")], capture_output=True, text=True, timeout=900, cwd=folder)
    sheet = folder / "sheet" / "rehearsal.json"
    return proc, json.loads(sheet.read_text()) if sheet.exists() else {}


def test_each_site_is_judged_on_its_own_and_the_sheet_names_it(tmp_path) -> None:
    proc, sheet = rehearse(tmp_path, "[rehearse]\nduration = 0.5\ngain_margin = false\ndelay_margin = false\n",
                           right_limits=False)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("NO-GO: no limits declared at site 'right'")
    left, right = sheet["sites"]
    assert (left["site"], left["verdict"], right["site"], right["verdict"]) == ("left", "GO", "right", "NO-GO")
    assert left["why"].startswith("every limit held in the only trial run; the closest: actuators.stroke at "
                                  "actuator 1 of site 'left'")
    assert [r["limit"] for r in sheet["limits"]] == ["actuators.stroke at actuator 1 of site 'left'"]
    assert [a["name"] for a in sheet["actuators"]] == ["actuator 1 of site 'left'", "actuator 1 of site 'right'"]
    assert {"limits.displacement of site 'left'", "limits.displacement of site 'right'"} <= set(sheet["peaks"])
    assert html.escape("site 'left': GO: every limit held") in (tmp_path / "sheet" / "rehearsal.html").read_text()


@pytest.mark.long
def test_each_sites_margins_are_its_own_loops_closed_forms(tmp_path) -> None:
    """Both sites' delay and gain margins (the default brackets, the gain's to 8: g* = 4.45 at 800 N*s/m; about
    45 runs), printed beside the closed forms."""
    proc, sheet = rehearse(tmp_path, "[rehearse]\nduration = 0.5\ngain_margin_bracket = [1.0, 8.0]\n",
                           right_limits=True)
    assert proc.returncode == 0, proc.stderr
    for delay, gain in zip(sheet["delay_margin"], sheet["gain_margin"]):
        sdof = DelayedSpringSdof(M, DAMPING[delay["site"]], K_N, K_E)
        tau_star, squared = sdof.delay_margin(), (sdof.crossing_frequency() * DT) ** 2
        g_star = brentq(lambda g: DelayedSpringSdof(M, sdof.c, K_N, g * K_E).delay_margin() - TAU_0, 1.01, 10.0)
        print(f"site {delay['site']!r}: delay margin {1e3 * (TAU_0 + delay['s']):.4f} ms in all against tau* "
              f"{1e3 * tau_star:.4f} ms; gain margin {gain['factor']:.4f} against g* {g_star:.4f}")
        assert tau_star - delay["tolerance_s"] - tau_star * squared <= TAU_0 + delay["s"] <= tau_star * (1 + squared)
        assert g_star - gain["tolerance"] - g_star * squared <= gain["factor"] <= g_star * (1 + squared)
