"""The integrators study's outputs: the tables, results.json and the plots (docs/integrators.md)."""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.base import finite, pyplot, save_figure, write_json
from hybridsim.coordinator.problems.integrators import study as s

TABLE_OMEGAS = (0.1, 1.0, 10.0, 100.0, 1e4)


def _at(values: list[float], omega: float) -> float:
    return values[int(np.argmin(np.abs(np.log(s.OMEGAS) - math.log(omega))))]


def _g(x: float, digits: int = 6) -> str:
    return "-" if not math.isfinite(x) else f"{x:.{digits}g}"


def summary(result: dict[str, Any]) -> dict[str, Any]:
    return finite({
        "omegas": list(map(float, s.OMEGAS)),
        "spectra": result["spectra"],
        "free_vibration": [asdict(f) for f in result["free_vibration"]],
        "delays": list(s.DELAYS), "delay_xi": s.DELAY_XI, "delay_limits": result["delay_limits"],
        "delay_estimate": s.delay_estimate(), "lags": list(s.LAGS), "lag_limits": result["lag_limits"],
        "lag_estimate": s.lag_estimate(),
        "convergence": [{**asdict(c), "slope": c.slope} for c in result["convergence"]],
        "yielding": [{"scheme": y.scheme, "dt": list(y.dt), "difference": list(y.difference),
                      "peak_drift": y.peak_drift} for y in result["yielding"]],
    })


def format_table(result: dict[str, Any]) -> str:
    lines = ["Spectral radius from the amplification matrix [closed form] at Omega = omega dt (undamped SDOF)", ""]
    head = "scheme".ljust(28) + "".join(f"{w:>24g}" for w in TABLE_OMEGAS)
    lines.append(head)
    for key, rows in result["spectra"].items():
        cells = [f"{_g(_at(rows['rho'], w))} [{_g(_at(rows['rho_closed'], w))}]" for w in TABLE_OMEGAS]
        lines.append(key.ljust(28) + "".join(c.rjust(24) for c in cells))
    lines += ["", "Period elongation (T_bar - T)/T and amplitude decay per cycle at Omega = 0.1 / 1", ""]
    for key, rows in result["spectra"].items():
        pe = "/".join(_g(_at(rows["period_elongation"], w), 4) for w in (0.1, 1.0))
        ad = "/".join(_g(_at(rows["amplitude_decay"], w), 4) for w in (0.1, 1.0))
        lines.append(f"{key:<28}PE {pe:<24}AD {ad}")
    lines += ["", "Free vibration through the coordinator: spectral radius measured (recurrence of the recorded "
              "displacements), per-step amplitude ratio, from the matrix, closed form", ""]
    lines.append(f"{'scheme':<28}{'Omega':>8}{'measured':>12}{'step ratio':>12}{'matrix':>12}{'closed':>12}")
    for f in result["free_vibration"]:
        lines.append(f"{f.scheme:<28}{f.omega_dt:>8g}{f.rho_measured:>12.6f}{f.step_ratio:>12.6f}"
                     f"{f.rho_matrix:>12.6f}{f.rho_closed:>12.6f}")
    lines += ["", f"Stability limit Omega_crit with an actuator delay (in steps of dt), xi = {s.DELAY_XI:g} "
              f"(undershoot 0 / 0.05); estimate 2 xi / delay", ""]
    lines.append(f"{'scheme':<28}" + "".join(f"{d:>16g}" for d in s.DELAYS))
    for key, rows in result["delay_limits"].items():
        cells = ["/".join(_g(v, 4) for v in pair) for pair in zip(*rows.values())]
        lines.append(f"{key:<28}" + "".join(c.rjust(16) for c in cells))
    lines.append(f"{'2 xi / delay':<28}" + "".join(f"{_g(v, 4):>16}" for v in s.delay_estimate()))
    lines += ["", f"Stability limit Omega_crit behind a first-order actuator (time constant in steps of dt), "
              f"xi = {s.DELAY_XI:g}; estimate 2 xi (1 - a)/a, a = exp(-dt/tau)", ""]
    lines.append(f"{'scheme':<28}" + "".join(f"{lag:>12g}" for lag in s.LAGS))
    for key, limits in result["lag_limits"].items():
        lines.append(f"{key:<28}" + "".join(f"{_g(v, 4):>12}" for v in limits))
    lines.append(f"{'2 xi (1 - a)/a':<28}" + "".join(f"{_g(v, 4):>12}" for v in s.lag_estimate()))
    lines += ["", "Convergence through the coordinator (SDOF 1 Hz, 2 %, sine ground motion from rest): max relative "
              "error at dt = T/" + ", T/".join(map(str, s.CONVERGENCE_DIVISORS)) + " and the measured order", ""]
    for c in result["convergence"]:
        lines.append(f"{c.scheme:<28}" + "".join(f"{e:>12.3e}" for e in c.errors) + f"   order {c.slope:.3f}")
    lines += ["", "Yielding five-story building against OpenSees' own integrator: max relative difference of the floor "
              "displacements at dt / dt/2, the first story's peak drift (yield at 1 cm)", ""]
    for y in result["yielding"]:
        lines.append(f"{y.scheme:<28}{y.difference[0]:>12.3e}{y.difference[1]:>12.3e}"
                     f"   drift {100 * y.peak_drift:.2f} cm")
    return "\n".join(lines) + "\n"


def write_results(result: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "results.json", summary(result))
    (out / "table.txt").write_text(format_table(result))


def write_plots(result: dict[str, Any], out: Path) -> list[Path]:
    plt = pyplot()
    files = []
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for key, rows in result["spectra"].items():
        line, = axes[0].semilogx(s.OMEGAS, rows["rho"], label=key)
        axes[0].semilogx(s.OMEGAS, rows["rho_closed"], ":", color=line.get_color())
        axes[1].semilogx(s.OMEGAS, rows["period_elongation"], color=line.get_color())
        axes[2].semilogx(s.OMEGAS, rows["amplitude_decay"], color=line.get_color())
    for f in result["free_vibration"]:
        axes[0].plot(f.omega_dt, f.rho_measured, "kx")
    axes[0].set(xlabel="Omega = omega dt", ylabel="spectral radius", ylim=(0, 1.05),
                title="matrix (solid), closed form (dotted), measured (x)")
    axes[1].set(xlabel="Omega", ylabel="period elongation", xlim=(1e-2, 3), ylim=(-0.2, 0.5))
    axes[2].set(xlabel="Omega", ylabel="amplitude decay per cycle", xlim=(1e-2, 3), ylim=(0, 1))
    axes[0].legend(fontsize=7)
    files.append(save_figure(fig, out / "spectra.png"))
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    delays = np.array(s.DELAYS[1:])
    for key, rows in result["delay_limits"].items():
        ax.loglog(delays, rows["undershoot 0"][1:], "o-", label=key)
    ax.loglog(delays, s.delay_estimate()[1:], "k--", label="2 xi / delay")
    ax.set(xlabel="actuator delay / dt", ylabel="Omega_crit", title=f"stability limit, xi = {s.DELAY_XI:g}")
    ax.legend(fontsize=7)
    files.append(save_figure(fig, out / "delay_limits.png"))
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for c in result["convergence"]:
        ax.loglog([1.0 / d for d in c.divisors], c.errors, "o-", label=f"{c.scheme} ({c.slope:.2f})")
    ax.set(xlabel="dt / T", ylabel="max relative error", title="convergence (measured order)")
    ax.legend(fontsize=7)
    files.append(save_figure(fig, out / "convergence.png"))
    shown = [y for y in result["yielding"] if y.scheme in ("kr-alpha(0.5)", "cr", "central-difference")]
    if shown:
        fig, axes = plt.subplots(len(shown), 1, figsize=(10, 3.2 * len(shown)), squeeze=False)
        for ax, y in zip(axes[:, 0], shown):
            ours, theirs, ours_half, theirs_half = y.roof
            t, t_half = y.dt[0] * np.arange(ours.size), y.dt[1] * np.arange(ours_half.size)
            ax.plot(t, theirs, "k-", lw=1.0, label=f"OpenSees, dt = {y.dt[0]:g} s")
            ax.plot(t, ours, "r--", lw=1.0, label="coordinator")
            ax.plot(t, 10 * (ours - theirs), "b-", lw=0.8, label=f"10 x difference at dt ({y.difference[0]:.1e})")
            ax.plot(t_half, 10 * (ours_half - theirs_half), "g-", lw=0.8,
                    label=f"10 x difference at dt/2 ({y.difference[1]:.1e})")
            ax.set(ylabel="roof displacement (m)", title=y.scheme, xlim=(0, 20))
            ax.legend(fontsize=7, loc="upper right")
        axes[-1, 0].set(xlabel="t (s)")
        files.append(save_figure(fig, out / "yielding.png"))
    return files
