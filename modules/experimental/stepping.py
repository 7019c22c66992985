"""How an experimental site takes its steps: in lockstep with the coordinator (:class:`Lockstep`) or on its own
wall clock (:class:`OwnClock`, :mod:`hybridsim.modules.experimental.clock`), one class chosen when a session
opens.  Both answer the module's ledger: ``check`` a step's order before anything moves, ``received`` a
target (its arrival), ``trial`` (the measurement at the step's end), ``accept`` (commit), ``discard``.

A target is for a time.  t = 0 is the reading at rest, and its trials are pre-test probes that move nothing
(the module answers those).  In lockstep a target for time t is reached at the control sample nearest t (dt the
control sample): the step runs the samples from the last committed one to it, m of them when t is on the
coordinator's grid t_n = n Dt, fewer at an intermediate time (OpenSees' AlphaOS, HHT and generalized-alpha
evaluate the restoring force at t_n + alpha Dt), and the command generation interpolates over the samples the
step has.  A site on its own clock runs on the grid.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np

from hybridsim.modules.experimental.clock import SiteClock
from hybridsim.modules.experimental.command_generation import CommandGenerator
from hybridsim.modules.experimental.relaxation import Relaxation
from hybridsim.modules.experimental.site import ExperimentalSite, SiteResponse
from hybridsim.wire.contract import ModuleError, StepRefused


class Lockstep:
    """The site's m control samples of a step run when the step is executed (``generator``: their targets).

    A trial is taken back (an iterating integrator) from a snapshot of the site taken before it."""

    clock: SiteClock | None = None

    def __init__(self, site: ExperimentalSite, generator: CommandGenerator, step_dt: float, dofs: int,
                 relaxation: Relaxation | None = None) -> None:
        self.site = site
        self.relaxation = relaxation
        self.held = 0
        """the committed samples that held a target for the relaxation check (not part of the steps' time)"""
        self._holding = 0
        self.generator = generator
        self.step_dt = step_dt
        self.samples = generator.samples
        self.targets = np.zeros((generator.history, dofs))
        """the committed targets, newest first: d_n, d_{n-1}, .. (zero before the start, at rest)"""
        self.committed_sample = -1
        self.rest: SiteResponse | None = None
        """the reading at rest (sample 0)"""
        self._snapshot: dict[str, Any] | None = None
        self._generators: dict[int, CommandGenerator] = {}

    def lock(self) -> contextlib.AbstractContextManager[Any]:
        """Held while the site's record may change under a reader."""
        return contextlib.nullcontext()

    def at_rest(self) -> SiteResponse | None:
        """The reading at rest, taken now if the site has not started (None: a restored site started long ago)."""
        if self.rest is None and self.site.sample == -1:
            self.rest = self.site.start()
            self.held = self.site.sample  # force-controlled DOFs' targets ramped in: not part of the steps' time
        return self.rest

    def check(self, step: int, time: float) -> int:
        """The control sample a target for ``time`` (s) ends its step at (0: the rest state at t = 0); refuses a
        time that is not inside the next step: after the last committed sample, at most m samples later."""
        sample_dt = self.step_dt / self.samples
        if abs(time) <= 1e-9 * self.step_dt:
            return 0
        end = math.floor(time / sample_dt + 0.5)  # the nearest sample (a time half-way: the later)
        done = max(self.committed_sample - self.held, 0)
        if not done < end <= done + self.samples:
            raise StepRefused(step, f"the site is at t = {done * sample_dt:.9g} s; the next target must be for a time "
                                    f"after it, up to one step later ({(done + self.samples) * sample_dt:.9g} s), not "
                                    f"{time} s")
        if end - done != self.samples and self.generator.scheme != "interpolate":
            raise StepRefused(step, f"time {time} s is inside a step of {self.step_dt} s: the predictor-corrector "
                                    "runs whole steps; use command_generation = \"interpolate\" for an integrator "
                                    "that evaluates at intermediate times (AlphaOS, HHT, generalized-alpha)")
        return end

    def received(self, end: int, target: np.ndarray) -> None:
        """A target has arrived (a lockstep site runs it when executed)."""

    def trial(self, end: int, target: np.ndarray) -> SiteResponse:
        """Run the step's samples toward ``target``, reached at sample ``end``; the measurement there."""
        if self.rest is None:
            self.at_rest()
        self._snapshot = self.site.state()
        samples = end - max(self.committed_sample - self.held, 0)
        generator = self.generator if samples == self.samples else self._shorter(samples)
        for command in generator.commands(target, self.targets):
            response = self.site.advance(command)
        if self.relaxation is not None:  # hold the target, then compare the forces (docs: relaxation.py)
            reached = response.force.copy()
            for _ in range(self.relaxation.hold_samples):
                response = self.site.advance(target)
            self._holding = self.relaxation.hold_samples
            self.relaxation.check(reached, response.force, self.site.sample)
        return response  # a step has one sample at least

    def _shorter(self, samples: int) -> CommandGenerator:
        """The interpolation over a step of ``samples`` (an intermediate time)."""
        if samples not in self._generators:
            self._generators[samples] = CommandGenerator("interpolate", samples)
        return self._generators[samples]

    def accept(self, target: np.ndarray) -> None:
        """The trial of ``target`` is committed."""
        self.site.commit()
        self.committed_sample = self.site.sample
        self.held, self._holding = self.held + self._holding, 0
        self._snapshot = None
        self.targets = np.vstack((target, self.targets[:-1]))

    def discard(self) -> None:
        """Take the uncommitted trial back."""
        if self._snapshot is not None:
            self.site.set_state(self._snapshot)
            self._snapshot = None
        self._holding = 0

    def counters(self) -> dict[str, float]:
        """The clock's counters (in lockstep: the relaxation check's warnings, once there are any)."""
        warnings = 0 if self.relaxation is None else self.relaxation.warnings
        return {"relaxation_warnings": float(warnings)} if warnings else {}

    def stop(self) -> dict[str, float]:
        """The session ends; the stepping's figures (the relaxation check's, when the site declares one)."""
        if self.relaxation is None:
            return {}
        return {"relaxation_warnings": float(self.relaxation.warnings),
                "relaxation_largest_change": self.relaxation.largest}

    def state(self) -> dict[str, Any]:
        return {"site": self.site.state(), "targets": self.targets.tolist(), "sample": self.committed_sample,
                "held": self.held}

    def set_state(self, state: dict[str, Any]) -> None:
        self.site.set_state(state["site"])
        self.targets = np.array(state["targets"], float)
        self.committed_sample = int(state["sample"])
        self.held, self._holding = int(state.get("held", 0)), 0
        self.site.record.restart(self.committed_sample + 1)
        self._snapshot = None


class OwnClock(Lockstep):
    """The site's control loop runs on the wall clock from the first target on (``clock``); a step's target is
    delivered as it arrives and its measurement waited for.  Before the clock starts (the reading at rest and the
    pre-test) it is a lockstep site.  A site on its own clock cannot take a step back."""

    def __init__(self, site: ExperimentalSite, generator: CommandGenerator, step_dt: float, dofs: int,
                 clock: SiteClock) -> None:
        super().__init__(site, generator, step_dt, dofs)
        self.clock = clock
        self._counters: dict[str, float] = {}
        self._reported: dict[str, float] = {}

    def lock(self) -> contextlib.AbstractContextManager[Any]:
        return self.clock.lock  # type: ignore[union-attr]

    def check(self, step: int, time: float) -> int:
        """The step a target for ``time`` ends (n: t_n = n Dt, on the grid: the clock runs whole steps)."""
        n = round(time / self.step_dt)
        if abs(time - n * self.step_dt) > 1e-9 * self.step_dt:
            raise StepRefused(step, f"time {time} s is not a multiple of the step {self.step_dt} s: a site on its own "
                                    "clock runs whole steps (clock = \"lockstep\" takes intermediate times)")
        clock = self.clock
        assert clock is not None
        if not clock.running:
            super().check(step, time)
        elif n != clock.done + 1:
            raise StepRefused(step, f"the site's own clock has run to t = {clock.done * self.step_dt} s; "
                                    f"the next target must be for t = {(clock.done + 1) * self.step_dt} s, "
                                    f"not {time} s (a site on its own clock cannot take a step back: an "
                                    "iterating integrator needs clock = \"lockstep\")")
        return n

    def received(self, n: int, target: np.ndarray) -> None:
        clock = self.clock
        assert clock is not None
        clock.deliver(n, target)
        if not clock.running:
            self.at_rest()
            clock.start(n - 1, self.targets, self.targets[0])
        clock.promote_caller()

    def trial(self, n: int, target: np.ndarray) -> SiteResponse:
        clock = self.clock
        assert clock is not None
        end, self._counters = clock.result(n, 30.0 + 10 * clock.samples * clock.period)
        return end  # type: ignore[no-any-return]

    def accept(self, target: np.ndarray) -> None:
        clock = self.clock
        assert clock is not None
        if not clock.running:
            super().accept(target)
            return
        self.committed_sample = int(clock.step_log.last()[0])  # the clock has committed the step's samples
        self.targets = np.vstack((target, self.targets[:-1]))

    def counters(self) -> dict[str, float]:
        """The clock's counters (slowed steps, held and late samples) that changed with the step just run, so the
        coordinator's monitor follows them during the run (docs/realtime.md)."""
        changed = {k: v for k, v in self._counters.items() if self._reported.get(k) != v}
        self._reported.update(changed)
        return changed

    def stop(self) -> dict[str, float]:
        clock = self.clock
        assert clock is not None
        clock.stop()
        return clock.stats()

    def state(self) -> dict[str, Any]:
        raise ModuleError("experimental module: no checkpoint: it runs on its own clock (clock = \"own\"): its "
                          "actuators never stop, so a step cannot be taken back to a checkpoint; set "
                          "output.checkpoint_every = 0")
