"""The maRTHS benchmark loop, tick by tick as its companion code runs it (SPEC §12).

Tick k = 0 .. N-1 (t_k = k / 1024 s):

1. ag_k = scale x linear interpolation of the record;
2. reference structure: one Newmark step with ag_k (it never sees the
   physical side, so its run is computed once per record and scale);
3.-6. the experimental site's measurement of tick k (plant output from the
   commands up to k-1, sensor noise, strokes -> (x, theta), feedback force);
7. numerical substructure: one Newmark step with ag_k and that force, giving
   the target (U27, -U21);
8.-10. the site turns the target into strokes and commands and drives the
   plant for one sample, which yields the measurement of tick k+1.

The physical side is anything with ``start() / trial(command) / commit()``
speaking the interface DOFs (U27, U21, U29) in SAP sign: the in-process
site here, or a site module (in process or a daemon) through
:class:`ModuleSide`.  With ``plant = "ideal"`` each tick is solved as one
simultaneous equation by fixed-point iteration (§17.4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Protocol

import numpy as np

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.problems.marths import data, parts
from hybridsim.coordinator.problems.marths.evaluation import criteria
from hybridsim.coordinator.problems.marths.tick import compiled_site
from hybridsim.coordinator.problems.marths.structure import (
    FEEDBACK_DOFS, FRAME_SIGN, PARTITIONS, STORY_DOFS, THETA_CONTROLLED, X_FLOOR1, NewmarkMap,
    numerical_map as partition_map, reference_model)
from hybridsim.wire.contract import Command, Module
from hybridsim.modules.experimental.compensators.base import Compensator
from hybridsim.modules.experimental.module import build_site
from hybridsim.modules.experimental.site import ExperimentalSite, SiteResponse

OUTPUT_DOFS = (X_FLOOR1, THETA_CONTROLLED, *STORY_DOFS.values())
"""U27, U21, then the storey DOFs: what the benchmark logs of each 29-DOF model"""
IDEAL_TOLERANCE = 1e-15
"""m: the same-tick iteration stops when the target strokes change by less"""
IDEAL_MAX_PASSES = 60
NOMINAL_NOISE_SEED = 123


@dataclass(frozen=True)
class RunSpec:
    """One benchmark run."""

    record: str = "elcentro"
    scale: float = 0.4
    compensator: str = "rls"
    plant: str = "nominal"
    """nominal | uncertain | ideal (perfect actuator, same tick) | ideal-delay (perfect, one sample late)"""
    plant_seed: int | None = None
    noise: bool = True
    noise_seed: int = NOMINAL_NOISE_SEED
    shared_noise: bool = True
    partition: str = "as-published"
    daq_in_loop: bool = False
    duration: float | None = None
    """s: stop after this much of the record (None: the whole record, N = floor(t_end fs) + 1)"""
    guard: bool = True
    """each compensator inside the 3.8 V runaway guard: a command that would saturate stops the run"""
    plant_gain: float = 1.0
    """a gain error of the actuators: the plant's output scaled by it (the rehearsal's gain margin)"""

    def __post_init__(self) -> None:
        if self.record not in data.RECORDS:
            raise ValueError(f"record must be one of {', '.join(data.RECORDS)}, not {self.record!r}")
        if self.compensator not in parts.COMPENSATORS:
            raise ValueError(f"compensator must be one of {', '.join(parts.COMPENSATORS)}")
        if self.plant not in parts.PLANTS:
            raise ValueError(f"plant must be one of {', '.join(parts.PLANTS)}, not {self.plant!r}")
        if self.plant.startswith("ideal") and self.compensator != "none":
            raise ValueError("an ideal plant is a perfect actuator (measured = target): use compensator 'none'")
        if self.partition not in PARTITIONS:
            raise ValueError(f"partition must be one of {', '.join(PARTITIONS)}, not {self.partition!r}")
        for name in ("scale", "plant_gain"):
            if not (getattr(self, name) > 0 and math.isfinite(getattr(self, name))):
                raise ValueError(f"{name} must be a positive factor, not {getattr(self, name)}")
        if self.duration is not None and not (self.duration > 0 and math.isfinite(self.duration)):
            raise ValueError(f"duration must be a positive time (s), not {self.duration}")

    @property
    def iterative(self) -> bool:
        return self.plant == "ideal"

    def ticks(self) -> int:
        rec = data.record(self.record)
        n = rec.ticks(parts.SAMPLE_RATE)
        if self.duration is not None:
            n = min(n, math.floor(self.duration * parts.SAMPLE_RATE) + 1)
        return n


@dataclass
class History:
    """The logged signals of one run (SPEC §13), N samples each; strokes in mm."""

    spec: RunSpec
    target_strokes: np.ndarray
    """xa1_t, xa2_t (mm)"""
    measured_strokes: np.ndarray
    """xa1m, xa2m (mm), noise included"""
    commands: np.ndarray
    """cmd_u1, cmd_u2 (mm)"""
    command_volts: np.ndarray
    """cmd1_v, cmd2_v (V) before saturation"""
    estimate: np.ndarray
    """xm_hat (mm), rm_hat (rad, frame sign), rm2_hat (rad, frame sign)"""
    numerical: np.ndarray
    """xNum (mm), rNum (rad, frame sign), xNum_2st, rNum_2st, xNum_3st, rNum_3st (m; rad SAP sign)"""
    reference: np.ndarray
    """the same six signals of the reference structure"""
    feedback: np.ndarray
    """F27 (N), M21, M29 (N*m): the forces applied to the numerical substructure"""
    ground_acceleration: np.ndarray
    """ag (m/s^2)"""
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def time(self) -> np.ndarray:
        return np.arange(self.ground_acceleration.size) / parts.SAMPLE_RATE

    @property
    def max_command_volts(self) -> list[float]:
        return np.max(np.abs(self.command_volts), axis=0).tolist()


class PhysicalSide(Protocol):
    """The experimental side as the loop sees it: interface DOFs (U27, U21, U29), SAP sign, SI."""

    def start(self) -> SiteResponse: ...

    def trial(self, command: np.ndarray) -> SiteResponse: ...

    def commit(self) -> None: ...


class InProcessSide:
    """An :class:`ExperimentalSite` in this process; ``iterative`` keeps a snapshot to repeat a sample."""

    def __init__(self, site: ExperimentalSite, iterative: bool = False) -> None:
        self.site = site
        self.iterative = iterative
        self._snapshot: dict[str, Any] | None = None

    def start(self) -> SiteResponse:
        return self.site.start()

    def trial(self, command: np.ndarray) -> SiteResponse:
        if self.iterative:
            if self._snapshot is None:
                self._snapshot = self.site.state()
            else:
                self.site.set_state(self._snapshot)
        return self.site.advance(command)

    def commit(self) -> None:
        self._snapshot = None
        self.site.commit()


class ModuleSide:
    """A site module (in process or remote) driven through the module interface, one control sample per step.

    Step IDs increase by one per call; the command of a sample carries its
    time t_n = n dt; sample 0 is the reading at rest (zero command).
    """

    def __init__(self, module: Module, sample_period: float) -> None:
        self.module = module
        self.sample_period = sample_period
        self.step = -1
        self.sample = 0

    def _call(self, sample: int, command: np.ndarray) -> SiteResponse:
        self.step += 1
        self.module.propose(self.step, Command(sample * self.sample_period, np.asarray(command, float)))
        result = self.module.execute(self.step)
        return SiteResponse(result.displacement, result.force)

    def start(self) -> SiteResponse:
        response = self._call(0, np.zeros(3))
        self.module.commit(self.step)
        return response

    def trial(self, command: np.ndarray) -> SiteResponse:
        return self._call(self.sample + 1, command)

    def commit(self) -> None:
        self.module.commit(self.step)
        self.sample += 1


@cache
def ground_acceleration(record: str, scale: float, ticks: int) -> np.ndarray:
    """ag_k for k < ``ticks`` (m/s^2), read-only."""
    ag = data.record(record).sampled(scale, parts.SAMPLE_RATE)[:ticks]
    ag.setflags(write=False)
    return ag


@cache
def numerical_map(partition: str) -> NewmarkMap:
    return partition_map(partition, parts.DT)


@cache
def reference_response(record: str, scale: float, ticks: int) -> np.ndarray:
    """The reference structure's logged signals (ticks x 6, see :class:`History`), read-only."""
    u = NewmarkMap.of(reference_model(), parts.DT).displacements(ground_acceleration(record, scale, ticks))
    out = _logged(u[:, list(OUTPUT_DOFS)])
    out.setflags(write=False)
    return out


def prepare(spec: RunSpec) -> None:
    """Compute what runs of ``spec``'s record, scale and partition share (ground motion, reference, map,
    the delays measured without compensation), so that a timed run that follows measures the loop alone.
    """
    reference_response(spec.record, spec.scale, spec.ticks())
    numerical_map(spec.partition)
    assumed_delays(spec)


def _logged(u: np.ndarray) -> np.ndarray:
    """U27, U21, storeys (m, rad SAP) -> xNum/xRef in mm, rNum/rRef in frame sign, storeys as they are."""
    out = u.copy()
    out[..., 0] *= 1000.0
    out[..., 1] = -out[..., 1]
    return out


def delay_pretest(spec: RunSpec) -> RunSpec:
    """The run whose J1 is the delay inverse compensation assumes: ``spec`` uncompensated.

    What a lab measures before the test: the nominal plant, noise seed 123, the same record, scale,
    duration, partition, noise and DAQ settings.
    """
    return replace(spec, compensator="none", plant="nominal", plant_seed=None, noise_seed=NOMINAL_NOISE_SEED)


@cache
def measured_delays(pretest: RunSpec) -> tuple[float, float]:
    """J1 of ``pretest`` per actuator (s)."""
    j1 = criteria(run(pretest), parts.SAMPLE_RATE)["J1"]
    return j1[0] / 1000.0, j1[1] / 1000.0


def assumed_delays(spec: RunSpec) -> tuple[float, float] | None:
    """The delays (s) ``spec``'s inverse compensation is built from (None for the other compensators)."""
    if spec.compensator != "inverse":
        return None
    return measured_delays(delay_pretest(spec))


def site_config(spec: RunSpec, backend: dict[str, Any] | None = None, record: str | None = None) -> dict[str, Any]:
    """The `experimental` module config of ``spec``'s site (its compensator, delays and guard)."""
    return parts.site_config(spec.compensator, backend, record, assumed_delays(spec), spec.guard)


def build_side(spec: RunSpec, compensators: Sequence[Compensator] | None = None
               ) -> tuple[InProcessSide, ExperimentalSite]:
    """The in-process site with its virtual lab for ``spec``; ``compensators`` (one per actuator) replace
    ``spec``'s compensator and guard if given (a study's own)."""
    lab = parts.lab(spec.plant, spec.plant_seed, spec.noise, spec.noise_seed, spec.shared_noise,
                    spec.daq_in_loop, spec.plant_gain)
    config = site_config(spec) if compensators is None else parts.site_config("none", guard=False)
    site = build_site(config, lab, compensators)
    return InProcessSide(site, iterative=spec.iterative), site


def _diverged(numerical: np.ndarray, tick: int | None) -> None:
    """Stop the run at the first tick whose numerical response is not finite (``tick``: the loop's target of that
    tick is not finite, whatever the logged DOFs say)."""
    rows = np.flatnonzero(~np.isfinite(numerical).all(axis=1))
    first = int(rows[0]) if rows.size else tick
    if first is not None:
        raise RunStopped(f"the loop diverged: the numerical substructure's response is not finite from "
                         f"t = {first / parts.SAMPLE_RATE:.4f} s (tick {first}) on")


def simulate(spec: RunSpec, side: PhysicalSide, compiled: bool = True) -> dict[str, np.ndarray]:
    """Run the loop of §12 against ``side``; returns the structural logs (numerical, estimate, feedback, ag).

    ``compiled``: an in-process site whose every part has a compiled sample runs all its ticks in one kernel
    (:mod:`hybridsim.coordinator.problems.marths.tick`, bit for bit the objects' ticks); False, or any other
    side: the objects, tick by tick.
    """
    n = spec.ticks()
    ag = ground_acceleration(spec.record, spec.scale, n)
    newmark = numerical_map(spec.partition)
    outputs, interface = np.array(OUTPUT_DOFS), np.array(FEEDBACK_DOFS)
    logs = np.empty((n, outputs.size)), np.empty((n, 3)), np.empty((n, 3))
    response = side.start()
    site = (compiled_site(side.site) if compiled and isinstance(side, InProcessSide) and not spec.iterative
            else None)
    if site is not None:
        diverged = site.run(newmark, ag, response, outputs, interface, logs)
        if diverged is not None:
            _diverged(logs[0][:diverged + 1], diverged)
    else:
        _tick_by_tick(spec, side, response, newmark, ag, logs)
    _diverged(logs[0], None)
    return {"numerical": logs[0], "estimate": logs[1], "feedback": logs[2], "ground_acceleration": ag}


def _tick_by_tick(spec: RunSpec, side: PhysicalSide, response: SiteResponse, newmark: NewmarkMap, ag: np.ndarray,
                  logs: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """The loop of §12 on the objects, one tick at a time, from the site's ``response`` at rest."""
    outputs, interface = np.array(OUTPUT_DOFS), np.array(FEEDBACK_DOFS)
    numerical, estimate, forces = logs
    state = np.zeros(newmark.size)
    for k in range(ag.size):
        if spec.iterative and k > 0:
            state, response = _same_tick(side, state, ag[k], newmark, response)
        else:
            state = newmark.advance(state, ag[k], response.force)
        numerical[k] = state[outputs]
        estimate[k] = response.displacement
        forces[k] = response.force
        if not np.isfinite(state[interface]).all():  # diverged: no target goes to the site (its gate refuses it)
            _diverged(numerical[:k + 1], k)
        if not spec.iterative:
            response = side.trial(state[interface])
            side.commit()
    if spec.iterative:  # the last target still goes through the site, as in the explicit loop
        side.trial(state[interface])
        side.commit()


def _same_tick(side: PhysicalSide, state: np.ndarray, ag: float, newmark: NewmarkMap,
               response: SiteResponse) -> tuple[np.ndarray, SiteResponse]:
    """Solve measured(k) = target(k) by fixed-point iteration from the previous tick's target (§17.4)."""
    interface = list(FEEDBACK_DOFS)
    coupler = parts.coupler()
    target = state[interface]
    for _ in range(IDEAL_MAX_PASSES):
        response = side.trial(target)
        new_state = newmark.advance(state, ag, response.force)
        new_target = new_state[interface]
        change = np.max(np.abs(coupler.strokes(*(FRAME_SIGN[:2] * new_target[:2]))
                               - coupler.strokes(*(FRAME_SIGN[:2] * target[:2]))))
        target = new_target
        if change < IDEAL_TOLERANCE:
            side.commit()
            return new_state, response
    raise RunStopped(f"the same-tick iteration did not converge in {IDEAL_MAX_PASSES} passes")


def history(spec: RunSpec, logs: dict[str, np.ndarray], record: dict[str, np.ndarray]) -> History:
    """Assemble the logged signals of a run from the loop's logs and the site's record.

    The target strokes are the coordinator's: the kinematics of the target
    computed at tick k (§12 step 8).  Measured strokes and commands come from
    the site's record, indexed by control sample.
    """
    n = spec.ticks()
    target = logs["numerical"]
    target_strokes = parts.coupler().strokes(target[:, 0], -target[:, 1]).T * 1000.0
    estimate = logs["estimate"].copy()
    estimate[:, 0] *= 1000.0
    estimate[:, 1:] = -estimate[:, 1:]  # SAP -> frame sign
    commands = record["commands"][:n]
    return History(
        spec=spec, target_strokes=target_strokes, measured_strokes=record["measured_strokes"][:n],
        commands=commands, command_volts=parts.daq().volts(commands), estimate=estimate,
        numerical=_logged(target), reference=np.array(reference_response(spec.record, spec.scale, n)),
        feedback=logs["feedback"], ground_acceleration=np.array(logs["ground_acceleration"]))


def run(spec: RunSpec, compensators: Sequence[Compensator] | None = None, compiled: bool = True) -> History:
    """One run in process; ``compensators`` (one per actuator) replace ``spec``'s compensator if given;
    ``compiled``: the ticks in one kernel where the site allows (:func:`simulate`).

    A runaway guard that trips raises :class:`~hybridsim.modules.experimental.guards.RunawayStopped`.
    """
    side, site = build_side(spec, compensators)
    logs = simulate(spec, side, compiled)
    record = {name: site.record.array(name) for name in ("measured_strokes", "commands")}
    return history(spec, logs, record)


def trial_specs(base: RunSpec, trials: int, seed_offset: int = 0) -> list[RunSpec]:
    """The benchmark's campaign (§14.3, §15): the nominal run, then ``trials`` uncertain plants.

    Seeds: nominal noise 123; trial i = 1..N: plant 1000 + i, noise 2000 + i;
    ``seed_offset`` is added to all of them.
    """
    nominal_plant = "nominal" if base.plant == "uncertain" else base.plant
    runs = [replace(base, plant=nominal_plant, plant_seed=None, noise_seed=NOMINAL_NOISE_SEED + seed_offset)]
    if base.plant == "uncertain":
        runs += [replace(base, plant_seed=1000 + i + seed_offset, noise_seed=2000 + i + seed_offset)
                 for i in range(1, trials + 1)]
    return runs
