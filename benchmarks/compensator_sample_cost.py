"""Cost of one control sample of each compensator (prints a table; --json).

    python benchmarks/compensator_sample_cost.py [--samples 20000] [--repeat 3] [--json]

Each compensator is driven by a 2 Hz sine through a first-order lag (one call per
sample, as the site does); reported is the best of ``--repeat`` passes in microseconds
per sample, against the 977 us control period of the maRTHS benchmark.  The NARX rows
at L = 128 and L = 8192 show that the sliding-window update does not grow with L.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from hybridsim.coordinator.problems.marths import data
from hybridsim.modules.experimental.compensators.inverse import InverseCompensation
from hybridsim.modules.experimental.compensators.narx import NarxCompensator, Terms, measurement_filter
from hybridsim.modules.experimental.compensators.polynomial import PolynomialExtrapolation
from hybridsim.modules.experimental.compensators.rls import RlsCompensator

FS = 1024.0


def _builders():
    params = data.rls_initial_parameters()
    bw = data.constants()["controller_rlsac"]["butterworth"]
    narx_filter = measurement_filter(FS)
    return {
        "inverse (a0 = 42)": lambda: InverseCompensation(42.0),
        "polynomial, order 3": lambda: PolynomialExtrapolation(3, 0.04, 1 / FS),
        "RLS-AC (4 taps)": lambda: RlsCompensator(params["theta0_1"], params["P0_1"], bw["b"], bw["a"]),
        **{f"NARX order {order}, L = {window}": (lambda order=order, window=window: NarxCompensator(
            Terms(order), window, 1e-7, narx_filter, filter_command=True))
           for order, window in ((2, 128), (2, 1024), (2, 8192), (4, 1024))},
        "NARX order 2 + x[n-1]x[n-2], L = 1024": lambda: NarxCompensator(
            Terms(2, ((1, 2),)), 1024, 0.0, narx_filter, filter_command=True),
    }


def measure(samples: int, repeat: int) -> dict[str, float]:
    target = np.sin(2 * np.pi * 2.0 * np.arange(samples) / FS)
    out = {}
    for name, build in _builders().items():
        best = np.inf
        for _ in range(repeat):
            compensator, measured = build(), 0.0
            start = time.perf_counter()
            for t in target:
                measured += 0.1 * (compensator.command(float(t), measured) - measured)
            best = min(best, time.perf_counter() - start)
        out[name] = 1e6 * best / samples
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.samples, args.repeat)
    if args.json:
        print(json.dumps({"us_per_sample": figures, "machine": platform.processor() or platform.machine()}))
        return
    width = max(len(n) for n in figures) + 2
    print(f"{'compensator'.ljust(width)}us/sample  (control period 977 us)")
    for name, us in figures.items():
        print(f"{name.ljust(width)}{us:9.1f}")


if __name__ == "__main__":
    main()
