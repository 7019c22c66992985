"""The indicators watched as the run goes: a part of the step loop fed each committed row, O(1) a step.

From row n of the run's window (:mod:`hybridsim.coordinator.window`) it takes the structure's state and ground
acceleration (the energy balance, :class:`EnergyBalance`) and, at each watched module's interface, the command
(the displacement sent to it), the measurement and the measured force (its energy error, and per DOF the tracking
indicator and the online delay). It writes them into the same row (:mod:`~hybridsim.coordinator.integrity.columns`)
before the row is queued for the results file. A threshold crossed acts once per module and indicator, as its
:class:`~hybridsim.coordinator.integrity.rules.Rule` says: warn, hold the site's gate, or stop the run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.integrity.columns import BALANCE, BALANCE_TERMS, ENERGY_ERROR, INDICATORS, site_key
from hybridsim.coordinator.integrity.delay import STATE as DELAY_STATE, DelayEstimate, delay_of, delay_step
from hybridsim.coordinator.integrity.energy import EnergyBalance, EnergyError, StrainEnergy, energy_error_step
from hybridsim.coordinator.integrity.rules import Rule
from hybridsim.coordinator.integrity.tracking import STATE as TRACKING_STATE, TrackingIndicator, tracking_step
from hybridsim.modules.kernels import inlined, kernel

log = logging.getLogger(__name__)

Stop = Callable[[str, int, float, str], None]
"""the run's status told of a stop: the reason, the first step not run, its time (s), the module"""


@dataclass
class Watched:
    """One module's indicators: where its DOFs sit in the structure's, its rule, how its site is held."""

    name: str
    index: np.ndarray
    rule: Rule
    dt: float
    hold: Callable[[str], None] | None = None
    """the site's interlock (``Interlock.hold``); None when the site is not in this process"""
    energy: EnergyError = field(default_factory=EnergyError)
    tracking: list[TrackingIndicator] = field(default_factory=list)
    delay: list[DelayEstimate] = field(default_factory=list)
    steps: int = 0
    crossed: set[str] = field(default_factory=set)
    measured: str = ""
    """the results datasets of its measured displacement and force"""
    force: str = ""

    def __post_init__(self) -> None:
        self.measured, self.force = f"modules/{self.name}/displacement", f"modules/{self.name}/force"
        self.keys = tuple(site_key(self.name, k) for k in ("energy_error", "tracking", "delay"))
        """the results datasets of its indicators"""
        width = len(self.index)
        self.arrays = np.zeros((width, TRACKING_STATE)), np.zeros((width, DELAY_STATE))
        """each DOF's tracking indicator's and delay estimate's state, a row each (updated by :func:`site_step`)"""
        self.tracking = [TrackingIndicator(state=row) for row in self.arrays[0]]
        self.delay = [DelayEstimate(self.dt, state=row) for row in self.arrays[1]]
        self.values = np.zeros(len(INDICATORS))
        """the indicators as last recorded (:meth:`record`), in the order of :data:`INDICATORS`"""
        self.limits = np.array([self.rule.thresholds.get(k, np.inf) for k in INDICATORS], float)
        self.forgetting = self.delay[0].forgetting if self.delay else 1.0
        self.energy.last = np.zeros((2, width)) if self.energy.last is None else self.energy.last
        self.rows: tuple[np.ndarray, ...] = ()
        """the window's datasets it reads and writes (:meth:`bind`)"""
        self._args: tuple[Any, ...] = ()

    def bind(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Take the run's window's ``arrays`` (fixed for the run): its measured displacement and force, the
        datasets of its indicators."""
        self.rows = tuple(arrays[key] for key in (self.measured, self.force, *self.keys))
        self._args = ()

    def step(self, command: np.ndarray, i: int, input_energy: float | None) -> bool:
        """Row i of the bound window (:meth:`bind`): :meth:`observe` of the commands over the structure's DOFs [m]
        (its own at :attr:`index`) and the row's measured displacement [m] and force [N], then, given E_in [J],
        :meth:`record` (in one kernel call, :func:`site_row`); whether an indicator is above its threshold."""
        if not self._args:  # (the arguments that stay, after a bind or restore)
            self._args = (self.energy.state, self.energy.last, *self.arrays, self.dt, self.forgetting, self.index,
                          *self.rows, self.values, self.limits)
        self.steps += 1
        return site_row(*self._args, command, i, input_energy is not None, input_energy or 0.0, self._settled())

    def observe(self, command: np.ndarray, measured: np.ndarray, force: np.ndarray) -> None:
        """One row: commanded and measured displacement [m], measured force [N] over the module's DOFs."""
        self.steps += 1
        site_observe(self.energy.state, self.energy.last, *self.arrays, self.dt, self.forgetting,
                     *(np.asarray(v, float) for v in (command, measured, force)))

    def record(self, arrays: Mapping[str, np.ndarray], i: int, input_energy: float) -> bool:
        """Its indicators as they stand into slot i of the window's ``arrays``: E_err / E_in (1), each DOF's TI
        (m^2) and delay (s; 0 until its memory of about 1 / (1 - lambda) steps has passed); keeps in :attr:`values`
        what the thresholds are compared with (energy_error, the largest |TI| and |delay| over its DOFs); whether
        one of them is above its threshold (or NaN)."""
        return site_record(self.energy.state, input_energy, *self.arrays, self._settled(), i,
                           *(arrays[key] for key in self.keys), self.values, self.limits)

    def _settled(self) -> bool:
        """Whether the delay estimates' memory of about 1 / (1 - lambda) steps has passed."""
        return self.steps * (1.0 - self.forgetting) > 1.0

    def state(self) -> list[float]:
        """What a checkpoint keeps (:func:`state_length`): E_err [J], the steps observed, whether each indicator
        has acted (1/0), and per DOF the last command [m], TI [m^2] and the delay estimator's state."""
        out = [self.energy.value, float(self.steps), *(float(k in self.crossed) for k in INDICATORS)]
        for tracking, delay in zip(self.tracking, self.delay):
            out += [tracking.command, tracking.value, *delay.state()]
        return out

    def restore(self, state: np.ndarray, measured: np.ndarray, force: np.ndarray) -> None:
        """Continue from :meth:`state` and the checkpoint's row: what it measured [m] and its force [N]."""
        self.steps = int(state[1])
        self.crossed = {k for k, acted in zip(INDICATORS, state[2:5]) if acted}
        per_dof = state[5:].reshape(len(self.index), -1)
        self.energy = EnergyError(float(state[0]), np.array(force, float), measured - per_dof[:, 0])
        self._args = ()
        for j, (values, m) in enumerate(zip(per_dof, measured)):
            self.tracking[j] = TrackingIndicator(float(values[1]), (float(values[0]), float(m)), self.arrays[0][j])
            self.delay[j].restore([float(v) for v in values[2:]])

    @property
    def last(self) -> dict[str, float]:
        """The indicators as last recorded: what the thresholds were compared with."""
        return dict(zip(INDICATORS, self.values.tolist()))


@inlined
def site_observe(energy: np.ndarray, last: np.ndarray, tracking: np.ndarray, delay: np.ndarray, dt: float,
                 forgetting: float, command: np.ndarray, measured: np.ndarray, force: np.ndarray) -> None:
    """One row of a watched site (command, measured [m], force [N] over its DOFs), its states updated in place: its
    energy error (``energy``, ``last``: :func:`~.energy.energy_error_step`), each DOF's tracking indicator (a row of
    ``tracking``: :func:`~.tracking.tracking_step`) and delay estimate (of ``delay``: :func:`~.delay.delay_step`)."""
    energy_error_step(energy, last, command, measured, force)
    for j in range(command.size):
        tracking_step(tracking[j], command[j], measured[j])
        delay_step(delay[j], dt, forgetting, command[j], measured[j])


@inlined
def site_record(energy: np.ndarray, input_energy: float, tracking: np.ndarray, delay: np.ndarray, settled: bool,
                i: int, energy_out: np.ndarray, tracking_out: np.ndarray, delay_out: np.ndarray, values: np.ndarray,
                limits: np.ndarray) -> bool:
    """A watched site's indicators into row i of its datasets and into ``values`` (E_err / E_in, the largest |TI|
    and |tau|; a delay is 0 until ``settled``); whether one of ``values`` is above its limit (or NaN)."""
    values[0] = energy_out[i] = energy[0] / input_energy if input_energy > 0.0 else 0.0
    for j in range(tracking.shape[0]):
        tracking_out[i, j], delay_out[i, j] = tracking[j, 0], delay_of(delay[j]) if settled else 0.0
    values[1] = np.max(np.abs(tracking_out[i])) if tracking.shape[0] else 0.0  # (np.max keeps a NaN, max drops it)
    values[2] = np.max(np.abs(delay_out[i])) if tracking.shape[0] else 0.0
    return not (values[0] <= limits[0] and values[1] <= limits[1] and values[2] <= limits[2])  # (NaN: above)


@kernel
def site_row(energy: np.ndarray, last: np.ndarray, tracking: np.ndarray, delay: np.ndarray, dt: float,
             forgetting: float, index: np.ndarray, measured: np.ndarray, force: np.ndarray, energy_out: np.ndarray,
             tracking_out: np.ndarray, delay_out: np.ndarray, values: np.ndarray, limits: np.ndarray,
             commands: np.ndarray, i: int, record: bool, input_energy: float, settled: bool) -> bool:
    """Row i of a watched site in one call: :func:`site_observe` of ``commands`` at ``index`` and row i of
    ``measured`` and ``force``, then, to ``record``, :func:`site_record`."""
    site_observe(energy, last, tracking, delay, dt, forgetting, commands[index], measured[i], force[i])
    return site_record(energy, input_energy, tracking, delay, settled, i, energy_out, tracking_out, delay_out, values,
                       limits) if record else False


class IntegrityMonitor:
    """The step loop's indicators part: the structure's energy balance and each watched module's indicators,
    written into each step's row and compared with their thresholds."""

    def __init__(self, watched: list[Watched], partition: Any, model: Any, strain: StrainEnergy, window: Any,
                 stop: Stop, say: Callable[[str], None] = log.warning) -> None:
        """``partition``: its ``sent`` are the commands; ``model``: M, C and -M r (N per m/s^2, a column per
        excitation component); ``strain``: the modules' recoverable energy; ``window``: the run's
        :class:`~hybridsim.coordinator.window.RowWindow`, whose rows get the indicators; ``stop``: tells the
        status; ``say``: where a crossing is said (the log)."""
        shape = np.asarray(model.load_shape(), float)
        self.watched, self.partition, self.window, self.stop, self.say = watched, partition, window, stop, say
        self.load_shape = shape.reshape(shape.shape[0], -1)
        mass, damping = model.mass, model.damping
        self.balance = EnergyBalance(mass=mass, damping=damping, strain=strain)
        arrays = window.arrays
        ground = arrays["ground_components" if shape.ndim == 2 else "ground_acceleration"]
        self.rows = (arrays["displacement"], arrays["velocity"], ground.reshape(len(ground), -1),
                     arrays["restoring_force"])
        """the window's datasets the balance reads (fixed for the run; the ground acceleration's a view, 2-D)"""
        self.balance.bind(self.rows, self.load_shape)
        self.out = arrays[BALANCE], arrays[ENERGY_ERROR], arrays["time"]
        for site in watched:
            site.bind(arrays)
        self.crossings: list[dict[str, Any]] = []
        """every threshold crossed: module, indicator, value, threshold, step, time (s), action"""

    def begin(self, n: int) -> None:
        """Row n, where the loop begins (the pre-test's or a checkpoint's): the state the first step starts from;
        its command is the structure's displacement (the pre-test's last probe is not a step's command). Its row
        is not written: a fresh run's row 0 holds zeros (at rest, no input yet), a resumed run's is on disk."""
        i = self.window.slot(n)
        self.balance.observe_row(i)
        for site in self.watched:
            site.step(self.rows[0][i], i, None)

    def __call__(self, n: int) -> None:
        """Step n: its indicators from its row, written into the row, then compared with the thresholds."""
        i, b = self.window.slot(n), self.balance
        b.observe_row(i)
        sent, input_energy = self.partition.sent, b.input
        above = [site for site in self.watched if site.step(sent, i, input_energy)]
        b.transfer = sum(site.energy.value for site in self.watched)
        balance, error, time_s = self.out
        b.write(balance, i)
        error[i] = b.transfer / input_energy if input_energy > 0.0 else 0.0
        for site in above:  # (after the whole row is written: a crossing may stop the run)
            self._compare(site, site.last, n, float(time_s[i]))

    def state(self) -> np.ndarray:
        """What a checkpoint keeps of the monitor (:func:`state_length` floats): the balance's integrals (input,
        damped, restoring work, J) and each watched module's :meth:`Watched.state`; the rest is the checkpoint's
        row, read again by :meth:`restore`."""
        b = self.balance
        return np.array([b.input, b.damped, b.restoring, *(v for site in self.watched for v in site.state())])

    def restore(self, n: int, state: np.ndarray, acted: Collection[tuple[str, str]] = ()) -> None:
        """Continue from :meth:`state` kept at step n (row n in the window): the indicators go on from their
        values there; ``acted``: (module, indicator) that acted after the checkpoint, before the run stopped
        (an operator's clear acknowledges them: they do not act again, and the log says so)."""
        row, i = self.window.arrays, self.window.slot(n)
        self.balance.observe_row(i)  # its last row (its integrals from the state, below)
        b = self.balance
        b.input, b.damped, b.restoring = (float(v) for v in state[:3])
        first = 3
        for site in self.watched:
            size = site_state_length(len(site.index))
            site.restore(state[first:first + size], row[site.measured][i], row[site.force][i])
            site.crossed |= {indicator for name, indicator in acted if name == site.name}
        for name, indicator in sorted(acted):
            self.say(f"integrity: {name}'s {indicator.replace('_', ' ')} acted after the checkpoint, before the run "
                     "stopped; it does not act again in this resumed run")
            first += size

    def summary(self) -> dict[str, Any]:
        """The run's figures: the energy balance [J], each module's indicators and energy error [J], the crossings
        of this session and every (module, indicator) that has acted in the run (a resume does not act on them)."""
        b = self.balance
        return {"integrity": {
            "balance_j": dict(zip(BALANCE_TERMS, b.terms())),
            "modules": {s.name: {**s.last, "energy_error_j": s.energy.value} for s in self.watched},
            "crossings": self.crossings,
            "acted": sorted([s.name, indicator] for s in self.watched for indicator in s.crossed)}}

    def _compare(self, site: Watched, values: Mapping[str, float], n: int, time_s: float) -> None:
        for indicator, threshold in site.rule.thresholds.items():
            value = values[indicator]
            if value <= threshold or indicator in site.crossed:
                continue
            site.crossed.add(indicator)
            action = "stop" if site.rule.action == "hold" and site.hold is None else site.rule.action
            reason = (f"integrity: {site.name}'s {indicator.replace('_', ' ')} {value:.4g} passed its threshold "
                      f"{threshold:.4g} at step {n} (t = {time_s:.6g} s)")
            self.crossings.append({"module": site.name, "indicator": indicator, "value": value,
                                   "threshold": threshold, "step": n, "time_s": time_s, "action": action})
            self.say(f"{reason}: {action}")
            if action == "hold":
                try:
                    site.hold(reason)  # type: ignore[misc]  (not None: a site out of reach is stopped instead)
                    continue
                except Exception as exc:  # noqa: BLE001 - a hold that did not reach the site stops the run
                    reason, action = f"{reason}; its hold failed ({exc})", "stop"
            if action == "stop":
                self.stop(reason, n + 1, time_s + site.dt, site.name)  # the status's step: the first not run
                raise RunStopped(reason)


def site_state_length(width: int) -> int:
    """Floats in :meth:`Watched.state` of a module of ``width`` DOFs."""
    return 2 + len(INDICATORS) + width * (2 + DELAY_STATE)


def state_length(widths: Iterable[int]) -> int:
    """Floats in :meth:`IntegrityMonitor.state` over the watched modules' DOF counts."""
    return 3 + sum(site_state_length(width) for width in widths)


def state_shape(rules: Mapping[str, Rule], slots: Iterable[Any]) -> np.ndarray | None:
    """Zeros the size of the monitor's state over the partition's ``slots`` (what a results file's checkpoints
    are created to hold); None when no module is watched."""
    widths = [s.ndof for s in slots if s.name in rules]
    return np.zeros(state_length(widths)) if widths else None


def integrity_monitor(rules: Mapping[str, Rule], partition: Any, start: Any, dt: float, stop: Stop
                      ) -> IntegrityMonitor | None:
    """The run's monitor over its modules (:class:`~hybridsim.coordinator.partition.Partition`) from where the loop
    starts (:class:`~hybridsim.coordinator.run_loop.Start`: the structure, its window and step); None when no
    module is watched.  A site in
    this process is held through its interlock, a site daemon through its operator service; a module the
    coordinator cannot hold is stopped instead."""
    watched = [Watched(s.name, s.index, rules[s.name], dt, _hold(s.module)) for s in partition.slots if s.name in rules]
    if not watched:
        return None
    strain = StrainEnergy.of(start.reduction.initial_stiffness, [s.index for s in partition.slots])
    monitor = IntegrityMonitor(watched, partition, start.reduction.model, strain, start.window, stop)
    if start.integrity is None:
        monitor.begin(start.step)
    else:
        monitor.restore(start.step, start.integrity, start.acted)
    return monitor


def _hold(module: Any) -> Callable[[str], None] | None:
    """How ``module``'s site is held: a site daemon's ``hold`` (over the wire), an in-process site's interlock."""
    return getattr(module, "hold", None) or getattr(getattr(module, "interlock", None), "hold", None)
