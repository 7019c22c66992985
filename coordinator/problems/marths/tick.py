"""The maRTHS loop's ticks as one compiled kernel over the parts' own state arrays (issue 38).

:func:`run_ticks` runs every tick of an in-process run (SPEC §12, the loop of
:func:`hybridsim.coordinator.problems.marths.loop.simulate`) in one call when each part of the site has a
compiled sample: the Newmark map (:func:`newmark_step`), the coupler's two maps (:func:`coupler_strokes`,
:func:`coupler_frame`), the compensators (none; RLS-AC, :func:`rls_sample`) and their runaway guards
(:func:`runaway`), the gate's limits (:func:`within_limits`), the virtual lab's DAQ (:func:`servo_volts`,
:func:`dac_command`), linear actuators (:func:`held_step`, :func:`held_output`) and stroke sensors
(:func:`sensed`), and the frame model's feedback force (:func:`feedback_sample`).  Those are the kernels the
parts' Python objects call, on the objects' own arrays (updated in place), in the order
:meth:`ExperimentalSite.advance` and :meth:`VirtualLab.command` call them: a tick is bit for bit the objects'
tick.  The site's record rows go into preallocated arrays.  A command a guard or the gate refuses stops the
kernel before it is sent, and the part's own Python code raises the refusal.  :func:`compiled_site` says whether
a site qualifies (None: the loop runs the objects tick by tick).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.marths.structure import NewmarkMap, newmark_step
from hybridsim.modules.experimental.compensators.none import NoCompensation
from hybridsim.modules.experimental.compensators.rls import RlsCompensator, rls_sample
from hybridsim.modules.experimental.gate import Gate, within_limits
from hybridsim.modules.experimental.guards import GuardedCompensator, runaway
from hybridsim.modules.experimental.kinematics import coupler_frame, coupler_strokes
from hybridsim.modules.experimental.physical_frame import FrameFeedback, feedback_sample
from hybridsim.modules.experimental.setups.marths_coupler import MarthsCoupler
from hybridsim.modules.experimental.site import MM_PER_M, ExperimentalSite, SiteResponse
from hybridsim.modules.kernels import inlined, kernel
from hybridsim.modules.plant.actuators import LinearActuators, held_output, held_step
from hybridsim.modules.plant.daq import dac_command, servo_volts
from hybridsim.modules.plant.lab import VirtualLab
from hybridsim.modules.plant.sensors import sensed

NONE, RLS = 0, 1
"""the compensators with a compiled sample"""
DIVERGED, RUNAWAY, REFUSED = 1, 2, 3
"""why :func:`run_ticks` stopped before its last tick (0: it did not)"""
_NO_RLS = (np.zeros(1), np.zeros((1, 1)), *(np.zeros(1) for _ in range(7)))
"""the arrays of a compensator without RLS state (unused: a tuple of compensators has one type)"""


@inlined
def _compensate(kind: int, arrays: tuple, forgetting: float, bounds: np.ndarray, guarded: bool, target: float,
                measured: float) -> tuple[float, int]:
    """One compensator's command (:meth:`Compensator.command`) and the code of the guard check that trips (0)."""
    if kind == RLS:
        theta, p, psi, phi, gain, b, a, measurement_w, command_w = arrays
        command = rls_sample(theta, p, psi, phi, gain, b, a, measurement_w, command_w, forgetting, target, measured)
    else:
        command = target
    return command, runaway(bounds, target, measured, command) if guarded else 0


@inlined
def _lab_sample(commands: np.ndarray, lab: tuple, daq: tuple, sensor: tuple, tick: int) -> np.ndarray:
    """:meth:`VirtualLab.command` of linear actuators without a specimen: the strokes (m) measured at ``tick``."""
    units, transition, input_map, output_map, x, max_volts = lab
    mm_per_volt, offset_volts, limit, quantum, in_loop = daq
    noise, drift, sensor_quantum, sensor_limit = sensor
    command = commands * units
    max_volts[:] = np.maximum(max_volts, np.abs(servo_volts(command, mm_per_volt, offset_volts)))
    if in_loop:
        command = dac_command(command, mm_per_volt, offset_volts, limit, quantum)
    x[:] = held_step(transition, input_map, x, command)
    return sensed(held_output(output_map, x), noise[tick], drift, tick, sensor_quantum, sensor_limit) / units


@inlined
def _site_sample(k: int, target: np.ndarray, site: tuple, compensators: tuple, gate: tuple, lab: tuple, daq: tuple,
                 sensor: tuple, frame: tuple, records: np.ndarray, taps: np.ndarray, stop: np.ndarray) -> tuple[int, int]:
    """:meth:`ExperimentalSite.advance` toward ``target``: the response of sample k in ``site``'s last two arrays,
    its rows in ``records`` and the RLS-AC's taps after it in ``taps`` (the record's compensator parameters); a
    refusal: (its code, the actuator) and what its message needs in ``stop``."""
    coupler, signs, measured_mm, commands_mm, tick, response = site
    d1, d2, a1, a2 = coupler
    kinds, arrays, forgetting, bounds, guarded = compensators
    signed = target * signs
    first, second = coupler_strokes(d1, d2, a1, a2, signed[0], signed[1])
    targets = np.array([first, second])
    targets_mm = targets * MM_PER_M
    for i in range(kinds.size):
        command, trip = _compensate(kinds[i], arrays[i], forgetting[i], bounds[i], guarded[i], targets_mm[i],
                                    measured_mm[i])
        if trip:
            stop[0], stop[1], stop[2], stop[3] = trip, targets_mm[i], measured_mm[i], command
            return RUNAWAY, i
        commands_mm[i] = command
    commands = commands_mm / MM_PER_M
    stroke_bounds, steps, gate_measured, pose_limits = gate
    allowed = (within_limits(commands, targets, gate_measured, target, stroke_bounds, steps, pose_limits)
               if pose_limits.size else within_limits(commands, targets, gate_measured, None, stroke_bounds, steps,
                                                      pose_limits))
    if not allowed:
        stop[4:6] = commands
        stop[6:8] = targets
        stop[8:11] = target
        return REFUSED, 0
    strokes = _lab_sample(commands, lab, daq, sensor, tick + k + 1)
    gate_measured[:] = strokes
    measured_mm[:] = strokes * MM_PER_M
    records[0, k] = targets_mm
    records[1, k] = commands_mm
    records[2, k] = measured_mm
    column = 0
    for i in range(kinds.size):
        if kinds[i] == RLS:
            theta = arrays[i][0]
            taps[k, column:column + theta.size] = theta
            column += theta.size
    psi, stiffness, damping, mass, q, velocity, h, started = frame
    x, theta = coupler_frame(d1, d2, a1, a2, strokes[0], strokes[1])
    force = feedback_sample(psi, stiffness, damping, mass, q, velocity, h, started or k > 0, x, theta)
    displacement, forces = response
    displacement[:] = signs * np.array([x, theta, q[2]])
    forces[:] = signs * force
    return 0, 0


@kernel
def run_ticks(ag: np.ndarray, newmark: tuple, outputs: np.ndarray, interface: np.ndarray, site: tuple,
              compensators: tuple, gate: tuple, lab: tuple, daq: tuple, sensor: tuple, frame: tuple, logs: tuple,
              records: np.ndarray, taps: np.ndarray, stop: np.ndarray) -> tuple[int, int, int]:
    """Ticks k = 0 .. N-1 of §12 (``ag``: N ground accelerations): the Newmark step with the last response, the
    logs (numerical, estimate, feedback) of tick k, then the site's sample toward the target.  Returns (the ticks
    whose site sample was taken, why it stopped (0: it did not), the actuator whose guard stopped it)."""
    transition, ground, feedback = newmark
    numerical, estimate, forces = logs
    displacement, force = site[5]
    state = np.zeros(transition.shape[0])
    for k in range(ag.size):
        state = newmark_step(transition, ground, feedback, state, ag[k], force)
        numerical[k] = state[outputs]
        estimate[k] = displacement
        forces[k] = force
        target = state[interface]
        if not np.all(np.isfinite(target)):
            return k, DIVERGED, 0
        why, actuator = _site_sample(k, target, site, compensators, gate, lab, daq, sensor, frame, records, taps,
                                     stop)
        if why:
            return k, why, actuator
    return ag.size, 0, 0


@dataclass
class CompiledSite:
    """A site whose samples :func:`run_ticks` can take: its parts and the arrays the kernel reads."""

    site: ExperimentalSite
    gate: Gate
    lab: VirtualLab
    actuators: LinearActuators
    guards: tuple[GuardedCompensator | None, ...]
    compensators: tuple[Any, ...]

    def run(self, newmark: NewmarkMap, ag: np.ndarray, response: SiteResponse, outputs: np.ndarray,
            interface: np.ndarray, logs: tuple[np.ndarray, np.ndarray, np.ndarray]) -> int | None:
        """Every tick of ``ag`` from the site's ``response`` at rest, logs written; the parts' counters follow.
        Returns the tick at which the numerical response diverged (None: it did not); a guard's or the gate's
        refusal is raised by the guard or the gate."""
        site, lab, n = self.site, self.lab, ag.size
        records, stop = np.full((3, n, self.gate.stroke.size), np.nan), np.zeros(11)
        taps = np.full((n, len(site.parameter_names)), np.nan)
        feedback, sensor, tick = site.forces.feedback, lab.strokes, lab.tick
        carried = (np.array(response.displacement, float), np.array(response.force, float))
        measured = np.array(self.gate.measured, float)
        done, why, actuator = run_ticks(
            ag, (newmark.transition, newmark.ground, newmark.feedback), outputs, interface,
            (site.setup.coupler.arms + site.setup.coupler.angles, site.signs, site.measured_mm,
             np.zeros(self.gate.stroke.size), tick, carried), self.compensators,
            (self.gate.stroke_bounds, self.gate.steps, measured, self.gate.pose_bounds),
            (lab.units_per_metre, *self.actuators.kernel_arrays(), lab.max_volts),
            (lab.daq.mm_per_volt, lab.daq.offset_volts, lab.daq.limit, lab.daq.quantum or 0.0, lab.daq.in_loop),
            (sensor.noise.sequence(tick + n + 1), sensor.drift, sensor.quantum or 0.0,
             np.inf if sensor.limit is None else sensor.limit),
            (*feedback.kernel_arrays(), feedback.sample_period, feedback.started), logs, records, taps, stop)
        self._ran(done, records, taps, measured, len(self.guards) if why == REFUSED else actuator)
        if why == RUNAWAY:
            guard = self.guards[actuator]
            assert guard is not None
            guard.stop(int(stop[0]), *stop[1:4])
        if why == REFUSED:
            self.gate.refuse(stop[4:6], stop[6:8], stop[8:11])
        return done if why == DIVERGED else None

    def _ran(self, samples: int, records: np.ndarray, taps: np.ndarray, measured: np.ndarray, passed: int) -> None:
        """The counters of ``samples`` samples taken by the kernel: the site's (and its record), the gate's (the
        strokes it measured last, m), the lab's, the guards' (the first ``passed`` also checked the refused
        sample's command, as they do on the objects), the frame model's."""
        self.site.ran(samples, *records, taps)
        self.gate.ran(samples, measured)
        self.lab.tick += samples
        for i, guard in enumerate(self.guards):
            if guard is not None:
                guard.sample += samples + (i < passed)
        self.site.forces.feedback.ran(samples)


def compiled_site(site: ExperimentalSite) -> CompiledSite | None:
    """``site`` as :func:`run_ticks` takes it, if every part has a compiled sample: the maRTHS coupler with the
    benchmark's inverse, the frame model's feedback force, compensators none or RLS-AC (guarded or not), a gate
    whose every check is :func:`within_limits` (:meth:`Gate.compiled`) over a virtual lab of linear actuators with
    stroke sensors and no specimen; else None."""
    gate = site.backend
    lab = gate.compiled() if type(gate) is Gate else None
    if (type(site) is not ExperimentalSite or type(site.setup) is not MarthsCoupler
            or site.setup.inverse != "benchmark" or type(site.forces) is not FrameFeedback
            or type(lab) is not VirtualLab or lab.specimen is not None or lab.load_cells is not None
            or type(lab.actuators) is not LinearActuators):
        return None
    guards = tuple(c if isinstance(c, GuardedCompensator) else None for c in site.compensators)
    inner = [c if guard is None else guard.inner for c, guard in zip(site.compensators, guards)]
    if not all(type(c) in (RlsCompensator, NoCompensation) for c in inner):
        return None
    rls = [type(c) is RlsCompensator for c in inner]
    compensators = (np.array([RLS if r else NONE for r in rls]),
                    tuple(c.kernel_arrays() if r else _NO_RLS for c, r in zip(inner, rls)),
                    np.array([c.forgetting if r else 1.0 for c, r in zip(inner, rls)]),
                    np.array([np.full(5, np.inf) if g is None else g.bounds for g in guards]),
                    np.array([g is not None for g in guards]))
    return CompiledSite(site, gate, lab, lab.actuators, guards, compensators)
