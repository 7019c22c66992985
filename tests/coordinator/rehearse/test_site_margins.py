"""`hybridsim rehearse` of examples/delayed_spring.toml: a virtual-lab site's delay and gain margins against the
closed form of the loop they rehearse.

The example's numerical part (m, c, k_n) and its lab spring k_e behind a pure 3 ms actuator delay make the loop
m x'' + c x' + k_n x + k_e x(t - tau) = 0, marginally stable at tau* (closed form,
hybridsim.coordinator.rehearse.delayed_sdof; 6.6716 ms): the delay margin is tau* - 3 ms added, and the gain
margin the factor g* on k_e at which tau*(g* k_e) = 3 ms (2.2228, the closed form solved for the stiffness).

Tolerance: the bisection returns the last stable value, within its tolerance below the run's own limit; the run is
the loop sampled at dt = 2 ms (central difference, no numerical damping; the delay linear between samples), whose
limit differs from the continuous one at second order in w* dt: the central difference's frequency error
(w dt)^2 / 24 and the interpolation's gain 1 - f (1 - f) (w dt)^2 / 2 >= 1 - (w dt)^2 / 8
(hybridsim.modules.plant.knobs) move k_e, c / m and so tau* (about c / k_e) by a relative (w* dt)^2 at most:
delta = tau* (w* dt)^2 = 2.7 us, and g* (w* dt)^2 for the gain (w* = 9.993 rad/s: (w* dt)^2 = 4.0e-4).

Tighter, the sampled loop's own limits (:func:`sampled_limits`, 6.67147 ms and 2.22274): the spectral radius of
the recurrence the run makes, written from Newmark's central difference and the interpolated delay, reaches 1
there; the bisection's runs, 0.3 % or more from them, are judged as that radius says.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

from hybridsim.coordinator.rehearse.delayed_sdof import DelayedSpringSdof

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "delayed_spring.toml"
M, C, K_N, K_E, TAU_0, DT = 1000.0, 400.0, 4.0e4, 6.0e4, 0.003, 0.002
"""the example's numerical part (kg, N*s/m, N/m), lab spring (N/m), actuator delay and step (s)"""


def closed_forms() -> tuple[float, float, float]:
    """tau* (s), g* and (w* dt)^2 of the example's loop."""
    sdof = DelayedSpringSdof(M, C, K_N, K_E)
    g_star = brentq(lambda g: DelayedSpringSdof(M, C, K_N, g * K_E).delay_margin() - TAU_0, 1.01, 10.0, xtol=1e-12)
    return sdof.delay_margin(), g_star, (sdof.crossing_frequency() * DT) ** 2


def spectral_radius(tau: float, gain: float) -> float:
    """The largest |z| of the sampled loop: central difference (Newmark, beta = 0, gamma = 1/2),
    d_{k+1} = d_k + dt v_k + dt^2 a_k / 2, (m + c dt / 2) a_{k+1} = -c (v_k + dt a_k / 2) - k_n d_{k+1} - g k_e
    dl_{k+1}, v_{k+1} = v_k + dt (a_k + a_{k+1}) / 2, the lab's displacement at k + 1 the command tau = (n + f) dt
    earlier, dl_{k+1} = (1 - f) d_{k+1-n} + f d_{k-n}.  State: d_k .. d_{k-n-1}, v_k, a_k."""
    n = math.floor(tau / DT + 1e-9)
    f = tau / DT - n
    size = n + 4
    v, a = n + 2, n + 3
    d_next = np.zeros(size)
    d_next[[0, v, a]] = 1.0, DT, DT * DT / 2
    history = [d_next, *np.eye(size)[:n + 1]]  # d_{k+1}, d_k, .., d_{k-n} as rows over the state
    delayed = (1 - f) * history[n] + f * history[n + 1]
    damped = np.eye(size)[v] + DT / 2 * np.eye(size)[a]
    a_next = -(C * damped + K_N * d_next + gain * K_E * delayed) / (M + C * DT / 2)
    step = np.zeros((size, size))
    step[0], step[1:n + 2] = d_next, np.eye(size)[:n + 1]
    step[v], step[a] = damped + DT / 2 * a_next, a_next
    return float(np.max(np.abs(np.linalg.eigvals(step))))


def sampled_limits() -> tuple[float, float]:
    """The sampled loop's delay (s, in all) and gain (at TAU_0) at which its spectral radius reaches 1."""
    return (brentq(lambda tau: spectral_radius(tau, 1.0) - 1.0, 0.005, 0.0075, xtol=1e-12),
            brentq(lambda g: spectral_radius(TAU_0, g) - 1.0, 1.5, 3.0, xtol=1e-12))


def rehearse(folder: Path, rehearse_table: str | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """The example, its [rehearse] table replaced by ``rehearse_table`` if given."""
    text = EXAMPLE.read_text()
    if rehearse_table is not None:
        text = text[:text.index("[rehearse]")] + rehearse_table + "\n" + text[text.index("[output]"):]
    (folder / EXAMPLE.name).write_text(text)
    proc = subprocess.run([sys.executable, "-m", "hybridsim", "rehearse", str(folder / EXAMPLE.name), "--out",
                           str(folder / "sheet")], capture_output=True, text=True, timeout=300, cwd=folder)
    sheet = folder / "sheet" / "rehearsal.json"
    return proc, json.loads(sheet.read_text()) if sheet.exists() else {}


def check(sheet: dict, tau_star: float, g_star: float, squared: float) -> None:
    delay, gain = sheet["delay_margin"][0], sheet["gain_margin"][0]
    found = TAU_0 + delay["s"]
    print(f"delay margin: {1e3 * delay['s']:.4f} ms added, {1e3 * found:.4f} ms in all; closed form tau* = "
          f"{1e3 * tau_star:.4f} ms (bisection tolerance {1e3 * delay['tolerance_s']:.3g} ms)")
    print(f"gain margin: {gain['factor']:.4f}; closed form g* = {g_star:.4f} (tolerance {gain['tolerance']})")
    assert tau_star - delay["tolerance_s"] - tau_star * squared <= found <= tau_star + tau_star * squared
    assert g_star - gain["tolerance"] - g_star * squared <= gain["factor"] <= g_star + g_star * squared


def test_the_margins_of_a_delayed_spring_are_the_closed_forms(tmp_path) -> None:
    """Brackets around the closed forms, each bisection's runs 0.3 % or more from them (4 runs for the delay, 3
    for the gain); the long test brackets widely."""
    tau_star, g_star, squared = closed_forms()
    proc, sheet = rehearse(tmp_path, "[rehearse]\nduration = 0.2\nmargin_duration = 2.5\n"
                                     "delay_margin_bracket = [0.0035, 0.0038]\ndelay_margin_tolerance = 1e-4\n"
                                     "gain_margin_bracket = [2.1, 2.3]\ngain_margin_tolerance = 0.1\n")
    assert proc.returncode == 0, proc.stderr
    check(sheet, tau_star, g_star, squared)
    tau_sampled, g_sampled = sampled_limits()
    delay, gain = sheet["delay_margin"][0], sheet["gain_margin"][0]
    assert tau_sampled - delay["tolerance_s"] <= TAU_0 + delay["s"] <= tau_sampled
    assert g_sampled - gain["tolerance"] <= gain["factor"] <= g_sampled
    assert "delay margin (site 'spring'): its loop stays stable with up to 3.65 ms added" in proc.stdout
    assert [m["site"] for m in sheet["delay_margin"] + sheet["gain_margin"]] == ["spring", "spring"]


def test_a_bracket_unstable_at_its_lower_end_is_one_line_naming_the_key_and_the_site(tmp_path) -> None:
    """5 ms added is past the delay margin (3.6 ms added, the closed form): no margin lies in [5, 6] ms."""
    proc, _ = rehearse(tmp_path, "[rehearse]\nduration = 0.2\nmargin_duration = 2.5\ngain_margin = false\n"
                                 "delay_margin_bracket = [0.005, 0.006]\n")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "rehearse.delay_margin_bracket of site 'spring': " in proc.stderr and "lower the bracket" in proc.stderr


def test_a_delay_bracket_past_the_labs_longest_delay_is_one_line_before_any_run(tmp_path) -> None:
    proc, _ = rehearse(tmp_path, "[rehearse]\nduration = 0.2\ngain_margin = false\ndelay_margin_bracket = [0.0, 2.0]\n")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert ("rehearse.delay_margin_bracket: its top 2 s added to the actuator delay of site 'spring' (0.003 s) "
            "passes the lab's longest delay, 1 s; give a top of at most 0.997 s") in proc.stderr
    assert not list(tmp_path.glob("sheet/**/*.h5"))  # no run was made


@pytest.mark.long
def test_the_margins_found_from_wide_brackets(tmp_path) -> None:
    """The example as shipped (brackets [0, 50 ms] and [1, 4]); prints both margins beside their closed forms."""
    proc, sheet = rehearse(tmp_path)
    assert proc.returncode == 0, proc.stderr
    check(sheet, *closed_forms())
