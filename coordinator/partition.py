"""The partition: which module owns which global DOFs, and one step across all modules.

Each module answers for its own DOFs; the partition scatters the global
trial displacement into module slices, gathers their restoring forces back
and sums them (DOFs shared by several modules get the sum).  Calls to the
modules of one step go out in parallel when any of them is remote (the last
module's call in the calling thread, the others on a thread pool).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from hybridsim.coordinator.errors import RunStopped
from hybridsim.wire.contract import (Command, Description, Module, ModuleError, Record, Session, StepResult,
                                     finish_run, module_records)

T = TypeVar("T")


@dataclass
class ModuleSlot:
    """A module in the test: its name, where it runs, and where its DOFs sit globally."""

    name: str
    module: Module
    description: Description
    index: np.ndarray
    """global indices of the module's DOFs, in the module's order"""
    where: str = "in process"

    @property
    def ndof(self) -> int:
        return int(self.index.size)


class ModuleStepError(RunStopped):
    """A module failed or refused a step; names the module, where it runs, the step and the cause."""

    def __init__(self, slot: ModuleSlot, step: int, cause: BaseException, row: int | None = None,
                 time_s: float | None = None) -> None:
        if row is None:
            text = f"module {slot.name!r} ({slot.where}) at step {step}: {cause}"
        else:  # one numbering: the results file's (row n is step n, t = n dt); the wire's counts the pre-test too
            text = (f"module {slot.name!r} ({slot.where}) at step {row} (t = {time_s:.6g} s): "
                    + re.sub(rf"\bstep {step}\b", f"step {row}", str(cause)))
        super().__init__(text)
        self.slot = slot
        self.module_name = slot.name
        self.step = step
        self.cause = cause

    def at_row(self, row: int, time_s: float) -> "ModuleStepError":
        """The same failure, named by the results file's step (its row) and time, what an operator looks up; the
        site's own step number (its log's) stays in :attr:`step`."""
        return ModuleStepError(self.slot, self.step, self.cause, row, time_s)


def coupling_problem(slot: ModuleSlot, integrator: str, options: Mapping[str, object], condense: bool,
                     motion: tuple[np.ndarray, np.ndarray] | None = None) -> str | None:
    """Why a dynamic module (docs/dynamic_modules.md: its description's ``info["dynamic"]``) cannot be coupled to
    this coordinator, in one line naming the fix; None when it can (or the module is quasi-static).  The
    partition of alpha-OS is exact only when both sides integrate with the same alpha and dt (the module takes
    the session's dt), every interface DOF stays in the coordinator's integration, and the module's record is the
    coordinator's ``motion`` (times s, a_g m/s^2) where both have it (the module's probes of it, its description's
    ``ground_motion``)."""
    info = slot.description.info
    if "dynamic" not in info:
        return None
    if integrator != info["dynamic"]:
        return (f"module {slot.name!r} integrates its own mass with {info['dynamic']}: set integrator.kind = "
                f"\"{info['dynamic']}\" (the coordinator's scheme must be the module's)")
    from hybridsim.coordinator.integrators.alpha_os import AlphaOSIntegrator

    alpha = float(options.get("alpha", AlphaOSIntegrator.CONFIG.keys["alpha"].default))
    if alpha != float(info["alpha"]):
        return (f"module {slot.name!r} integrates with alpha = {info['alpha']}, the coordinator with {alpha!r}: "
                f"set integrator.alpha = {info['alpha']} or the module's dynamic.alpha = {alpha!r}")
    if condense:
        return (f"module {slot.name!r} is dynamic: its interface DOFs carry its mass, so set "
                "structure.condense_massless = false")
    return _other_record(slot.name, info.get("ground_motion"), motion)


def _other_record(name: str, probes: str | None, motion: tuple[np.ndarray, np.ndarray] | None) -> str | None:
    """Why the module's record (``probes``: JSON [[t, a_g], ...]) is not the coordinator's (None: it is)."""
    if probes is None or motion is None:
        return None
    times, values = motion
    scale = max(float(np.max(np.abs(values))), 1e-12)
    for t, a in json.loads(probes):
        if t <= times[-1] + 1e-9 and abs(a - float(np.interp(t, times, values))) > 1e-9 * scale:
            return (f"module {name!r} excites its mass with another record than the coordinator's (a_g(t = {t:g} s) "
                    f"= {a:.6g} m/s^2 there, {float(np.interp(t, times, values)):.6g} here): give it the "
                    "coordinator's record, scaled, as dynamic.ground_acceleration (at ground_acceleration_dt)")
    return None


class Partition:
    """Module slots over the global DOFs of a structure with ``ndof`` DOFs."""

    def __init__(self, ndof: int, slots: Sequence[ModuleSlot]) -> None:
        self.ndof = ndof
        self.slots = tuple(slots)
        owned = np.zeros(ndof, dtype=int)
        for slot in self.slots:
            np.add.at(owned, slot.index, 1)
        self.unowned = np.flatnonzero(owned == 0)
        parallel = len(self.slots) > 1 and any(getattr(s.module, "is_remote", False) for s in self.slots)
        self._pool = ThreadPoolExecutor(len(self.slots), thread_name_prefix="module") if parallel else None
        self.last_results: list[StepResult] = []
        self.sent = np.zeros(ndof)
        """the displacement last sent to the modules (m, rad): the commands at their interfaces"""

    def _each(self, step: int, call: Callable[..., T], *per_slot: Sequence[object], parallel: bool = True) -> list[T]:
        """``call(slot, *args)`` for every slot (in parallel when remote); failures name the module."""

        def guarded(slot: ModuleSlot, *args: object) -> T:
            try:
                return call(slot, *args)
            except (ModuleError, OSError, RuntimeError) as exc:
                raise ModuleStepError(slot, step, exc) from exc

        calls = list(zip(self.slots, *per_slot))
        if self._pool is None or not parallel:
            return [guarded(s, *args) for s, *args in calls]
        # the last module's call runs in this thread while the pool runs the others: one hand-off fewer
        futures = [self._pool.submit(guarded, s, *args) for s, *args in calls[:-1]]
        last_slot, *last_args = calls[-1]
        try:
            last: T | BaseException = guarded(last_slot, *last_args)
        except ModuleStepError as exc:
            last = exc
        results = [f.result() for f in futures]  # the first failure in module order is the one raised
        if isinstance(last, ModuleStepError):
            raise last
        return [*results, last]  # type: ignore[list-item]

    def open(self, session_for: Callable[[ModuleSlot], Session]) -> None:
        self._each(0, lambda s: s.module.open(session_for(s)))

    def evaluate(self, step: int, time: float, commands: Sequence[np.ndarray]) -> list[StepResult]:
        """Propose and execute ``step`` with one displacement vector per module (module DOF order)."""

        def one(slot: ModuleSlot, displacement: np.ndarray) -> StepResult:
            slot.module.propose(step, Command(time, displacement))
            return slot.module.execute(step)

        self.last_results = self._each(step, one, commands)
        return self.last_results

    def restoring_force(self, step: int, time: float, displacement: np.ndarray) -> np.ndarray:
        """Propose and execute ``step`` at every module; the summed global restoring force (N)."""
        self.sent = displacement
        results = self.evaluate(step, time, [displacement[s.index] for s in self.slots])
        force = np.zeros(self.ndof)
        for slot, result in zip(self.slots, results):
            force[slot.index] += result.force  # a module's own DOFs are distinct; shared DOFs sum across modules
        return force

    def commit(self, step: int) -> None:
        """Commit ``step`` at every module, one after another: a remote module only notes the commit and
        sends it with its next message, so a thread per module would cost more than it saves."""
        self._each(step, lambda s: s.module.commit(step), parallel=False)

    def records(self, skip: str | None = None, since: Mapping[str, int] | None = None,
                ) -> tuple[dict[str, list[Record]], dict[str, str]]:
        """Every module's own records at the end (all but ``skip``, a module that failed; streamed ones from
        the row ``since[name]`` the results file lacks), and why a module could not give them (the run's
        steps are on disk either way)."""
        out: dict[str, list[Record]] = {}
        errors: dict[str, str] = {}
        for slot in self.slots:
            if slot.name == skip:
                continue
            try:
                records = module_records(slot.module, (since or {}).get(slot.name, 0))
            except Exception as exc:  # noqa: BLE001 - reported in the results file, the run's steps are kept
                errors[slot.name] = str(exc)
                continue
            if records:
                out[slot.name] = records
        return out, errors

    def streamed(self, step: int, since: Mapping[str, int]) -> dict[str, list[Record]]:
        """The rows of every module's streamed records from row ``since[name]`` on (the modules in ``since``;
        see :class:`hybridsim.wire.contract.Record`)."""
        out = {}
        for slot in self.slots:
            if slot.name in since:
                try:
                    out[slot.name] = module_records(slot.module, since[slot.name], final=False)
                except (ModuleError, OSError, RuntimeError) as exc:
                    raise ModuleStepError(slot, step, exc) from exc
        return out

    def close(self, completed: bool = False) -> dict[str, dict[str, float]]:
        """Close every module (errors at close are reported, not raised); their summaries by name.
        ``completed``: the run completed, each module is told so first (:func:`finish_run`)."""
        summaries: dict[str, dict[str, float]] = {}
        for slot in self.slots:
            try:
                if completed:
                    finish_run(slot.module)
                summaries[slot.name] = slot.module.close()
            except Exception as exc:  # noqa: BLE001 - closing must reach every module
                summaries[slot.name] = {"close_error": str(exc)}  # type: ignore[dict-item]
        if self._pool is not None:
            self._pool.shutdown(wait=False)
        return summaries
