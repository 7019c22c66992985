"""Two synthetic ground motions for the IDA campaign (the two records beside the three shipped ones).

    python examples/ida_frame/synthetic_records.py     # writes kanai_tajimi_firm.csv and kanai_tajimi_soft.csv here

Each is seeded Gaussian white noise under a Jennings, Housner & Tsai (1968) envelope (t/t1)^2, 1,
exp(-c (t - t2)), filtered by the Kanai-Tajimi ground filter (Kanai 1957, Tajimi 1960) in series with
Clough and Penzien's high-pass (Dynamics of Structures, 1975, sec. 25-3, which removes the drift of the
ground displacement):

    H(s) = (2 zg wg s + wg^2) / (s^2 + 2 zg wg s + wg^2) * s^2 / (s^2 + 2 zf wf s + wf^2),   wf = 0.1 wg

and scaled to a peak ground acceleration.  A firm site (wg = 15.6 rad/s, zg = 0.6) and a soft one (wg = 5.0
rad/s, zg = 0.3, most of its energy near 1.3 s): spectra unlike the shipped records'.  Made here, with no
third party's rights in them; the CSV files are what the campaign reads (this script makes them again).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import signal

DT, DURATION, G = 0.005, 25.0, 9.80665
"""s, s, m/s^2"""


@dataclass(frozen=True)
class Site:
    """The filter's ground frequency wg (rad/s) and damping zg, the envelope's t1, t2 (s) and decay c (1/s),
    the peak ground acceleration (g) and the noise's seed."""

    omega: float
    zeta: float
    rise: float
    strong: float
    decay: float
    pga_g: float
    seed: int


SITES = {"firm": Site(15.6, 0.6, 2.0, 9.0, 0.35, 0.6, 1), "soft": Site(5.0, 0.3, 3.0, 12.0, 0.25, 0.25, 2)}


def record(site: Site) -> tuple[np.ndarray, np.ndarray]:
    """(t s, a_g m/s^2) of the site's record."""
    t = DT * np.arange(int(round(DURATION / DT)) + 1)
    envelope = np.where(t < site.rise, (t / site.rise) ** 2,
                        np.where(t <= site.strong, 1.0, np.exp(-site.decay * (t - site.strong))))
    noise = envelope * np.random.default_rng(site.seed).standard_normal(t.size)
    wg, zg, wf = site.omega, site.zeta, 0.1 * site.omega
    numerator = np.polymul([2 * zg * wg, wg ** 2], [1.0, 0.0, 0.0])
    denominator = np.polymul([1.0, 2 * zg * wg, wg ** 2], [1.0, 2 * zg * wf, wf ** 2])
    _, a, _ = signal.lsim((numerator, denominator), noise, t)
    return t, site.pga_g * G * a / np.max(np.abs(a))


def main() -> None:
    here = Path(__file__).resolve().parent
    for name, site in SITES.items():
        t, a = record(site)
        np.savetxt(here / f"kanai_tajimi_{name}.csv", np.column_stack([t, a]), delimiter=",", fmt="%.10g",
                   header="time_s,accel_m_s2", comments="")


if __name__ == "__main__":
    main()
