"""Tracking of a multi-rate maRTHS site: linear interpolation vs OpenFresco's predictor-corrector.

    python benchmarks/marths_command_generation.py [--samples 10] [--arrival 0.3] [--duration S] [--json]

The benchmark's loop with the coordinator at Dt = m/1024 s: the numerical substructure (Newmark at Dt, the
ground motion sampled at 1024/m Hz) sends one target per step to the `experimental` module, which runs m
control samples of its compensators and the nominal plant (noise on) per step, generating the commands in
between by each scheme:

- ``interpolate``: from the last target to the new one; needs the new target at the start of the step
  (zero computing time: an idealisation on the wall clock);
- ``interpolate, one step behind``: what interpolation can do on the wall clock without stopping the
  actuators: the target computed at t_n is sent a step later;
- ``predictor-corrector p``: the new target arrives ``arrival`` Dt into the step (the coordinator's
  computing and round trip); until then the commands are extrapolated (order p), then corrected.

J2 per actuator is std(measured - target) / std(target) over the coordinator's steps: the stroke
measured at t_{n+1} against the target sent for t_{n+1}.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from hybridsim.coordinator.problems.marths import data, loop, parts
from hybridsim.coordinator.problems.marths.structure import FEEDBACK_DOFS, FRAME_SIGN, numerical_map
from hybridsim.wire.contract import Session
from hybridsim.modules.registry import build_module


def tracking_j2(samples: int, generation: str | dict, behind: bool, compensator: str,
                duration: float | None) -> list[float]:
    """J2 (%) of actuators 1 and 2 at the coordinator's steps."""
    spec = loop.RunSpec(compensator=compensator, duration=duration)
    step = samples * parts.DT
    config = loop.site_config(spec, backend={"plant": parts.plant_config(
        spec.plant, spec.plant_seed, spec.noise, spec.noise_seed)})
    config["command_generation"] = generation
    module = build_module("experimental", config)
    module.open(Session(step, parts.SITE_DOFS))
    side = loop.ModuleSide(module, step)
    newmark = numerical_map(spec.partition, step)
    ag = data.record(spec.record).sampled(spec.scale, parts.SAMPLE_RATE / samples)
    ag = ag[: (spec.ticks() - 1) // samples + 1]
    state, response, previous = np.zeros(newmark.size), side.start(), np.zeros(3)
    targets, measured = [], []
    for a in ag:
        state = newmark.transition @ state + newmark.ground * a + newmark.feedback @ response.force
        target = state[list(FEEDBACK_DOFS)]
        response = side.trial(previous if behind else target)
        side.commit()
        targets.append(target)
        measured.append(response.displacement)
        previous = target
    module.close()
    coupler = parts.coupler()

    def strokes(u: np.ndarray) -> np.ndarray:
        return coupler.strokes(FRAME_SIGN[0] * u[:, 0], FRAME_SIGN[1] * u[:, 1]).T

    target_strokes, measured_strokes = strokes(np.array(targets)), strokes(np.array(measured))
    error = measured_strokes - target_strokes
    return (100 * np.std(error, axis=0) / np.std(target_strokes, axis=0)).tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=10, help="control samples per coordinator step, m")
    parser.add_argument("--arrival", type=float, default=0.3, help="predictor-corrector: new target at x Dt")
    parser.add_argument("--duration", type=float, help="the first S s of El Centro x 0.4 (default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cases = {"interpolate (target in hand at t_n)": ("interpolate", False),
             "interpolate, one step behind": ("interpolate", True)}
    for order in (1, 2, 3):
        cases[f"predictor-corrector {order}, arrival {args.arrival:g}"] = (
            {"scheme": "predictor-corrector", "order": order, "arrival": args.arrival}, False)
    results = {compensator: {name: tracking_j2(args.samples, generation, behind, compensator, args.duration)
                             for name, (generation, behind) in cases.items()} for compensator in ("rls", "none")}
    if args.json:
        print(json.dumps({"samples": args.samples, "arrival": args.arrival, "J2": results}))
        return
    print(f"El Centro x 0.4, nominal plant, Dt = {args.samples}/1024 s; J2 (%) actuator 1 / 2 at the steps")
    for compensator, rows in results.items():
        print(f"compensator {compensator}:")
        for name, j2 in rows.items():
            print(f"  {name:<40} {j2[0]:7.2f} / {j2[1]:.2f}")


if __name__ == "__main__":
    main()
