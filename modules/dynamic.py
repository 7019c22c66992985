"""A dynamic substructure: a module that carries the mass and damping of its own DOFs and integrates them.

The coupling (docs/dynamic_modules.md) is the coordinator's alpha-OS scheme (Combescure & Pegon 1997)
partitioned by displacement continuity at the interface, as Gravouil & Combescure (2001) show it for one
time step per subdomain: the module integrates its internal DOFs with the same alpha, beta, gamma and dt
(or ``substeps`` steps of dt/m, the interface motion interpolated by the quintic Hermite polynomial of the
coarse step's end states), and answers the interface force *as alpha-OS weighs it*, G, defined by

    (1+alpha) G_{n+1} - alpha G_n = [M a_{n+1} + (1+alpha)(C v + K d - f)_{n+1} - alpha (C v + K d - f)_n]_b   (1)

(b: the interface rows; f = -M iota a_g, uniform excitation in relative coordinates).  G is affine in the
interface displacement d_b of step n+1; its slope is the interface Schur complement of the module's
effective matrix M + (1+alpha) gamma dt C + (1+alpha) beta dt^2 K divided by (1+alpha) beta dt^2, which the
coordinator's pre-test measures like a stiffness: with it as K_I, the coordinator's corrector solves the
whole structure's effective system exactly (one model's alpha-OS, to round-off, for a linear module).

alpha-OS commands the predictor d~_{n+1} and corrects d_{n+1} = d~_{n+1} + beta dt^2 a_{n+1} without telling
the modules.  The module recovers a_{n+1} from the next command, d~_{n+2} = d~_{n+1} + dt v~_{n+1}
+ dt^2 (gamma + 1/2) a_{n+1} (Newmark's predictor of the corrected state), then takes step n+1 again with the
true interface motion before the trial of step n+2: its committed state is the settled state of step n and
the committed command of step n+1.  Units: SI (m, rad, s, kg, N).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from pathlib import Path

from hybridsim.modules.base import StepLedger, resolve_config_path
from hybridsim.modules.config_schema import Integer, Key, Number, Numbers, Text
from hybridsim.wire.contract import Command, Description, Dof, ModuleError, Session, StepRefused

SCHEME_KEYS = {
    "alpha": Key(Number(minimum=-1.0 / 3.0 - 1e-15, maximum=0.0),
                 "the coordinator's alpha-OS alpha (the module integrates with the same scheme)", required=True),
    "substeps": Key(Integer(minimum=1, maximum=10_000), "sub-steps of the module per coordinator step (dt / m)",
                    default=1),
    "ground_acceleration": Key(Numbers("m/s^2", (1,)), "the coordinator's ground-motion record, scaled, "
                               "samples from t = 0"),
    "ground_acceleration_file": Key(Text(), "the same as a CSV file, one acceleration (m/s^2) a line, relative to "
                                    "the configuration's folder"),
    "ground_acceleration_dt": Key(Number("s", minimum=0.0, open_minimum=True), "the record's sample interval",
                                  required=True),
}
"""the keys of every dynamic kind's ``dynamic`` table (docs/dynamic_modules.md)"""
RECORD_KEYS = (("ground_acceleration", "ground_acceleration_file"),)
"""exactly one of them (the ``exactly_one`` of the kinds' ``dynamic`` schemas)"""


@dataclass(frozen=True)
class Scheme:
    """alpha-OS's weights (Combescure & Pegon 1997): beta = (1 - alpha)^2 / 4, gamma = 1/2 - alpha."""

    alpha: float
    substeps: int = 1

    @property
    def beta(self) -> float:
        return (1.0 - self.alpha) ** 2 / 4.0

    @property
    def gamma(self) -> float:
        return 0.5 - self.alpha


@dataclass
class State:
    """The module's full state at a time: d, v, a over all its DOFs (interface first) and G (equation 1)."""

    time: float
    d: np.ndarray
    v: np.ndarray
    a: np.ndarray
    g: np.ndarray
    resisting: np.ndarray | None = None
    """M a + C v + R(d) - f at the interface rows (N) where a model's elements give it (a yielding OpenSees
    module's reactions)"""

    def copy(self) -> "State":
        return State(self.time, self.d.copy(), self.v.copy(), self.a.copy(), self.g.copy(), self.resisting)


class Record:
    """a_g(t) (m/s^2): ``samples`` every ``dt`` s from t = 0, linear between them, 0 after the last."""

    def __init__(self, dt: float, samples: np.ndarray) -> None:
        self.samples = np.asarray(samples, float)
        self.times = float(dt) * np.arange(self.samples.size)

    def __call__(self, t: float) -> float:
        return float(np.interp(t, self.times, self.samples, right=0.0))

    def probes(self, count: int = 32) -> str:
        """JSON [[t, a_g], ...] at ``count`` sample times spread over the record and at its peak: what the
        coordinator compares with its own record (:func:`hybridsim.coordinator.partition.coupling_problem`)."""
        picks = set(np.linspace(0, self.samples.size - 1, count).round().astype(int).tolist())
        picks.add(int(np.argmax(np.abs(self.samples))))
        return json.dumps([[float(self.times[k]), float(self.samples[k])] for k in sorted(picks)])


def scheme_and_ground(table: dict, base_dir: Path) -> tuple[Scheme, Record]:
    """The scheme and the record of a ``dynamic`` table (its file relative to ``base_dir``)."""
    if "ground_acceleration_file" in table:
        path = resolve_config_path(base_dir, table["ground_acceleration_file"], "dynamic.ground_acceleration_file")
        try:
            samples = np.loadtxt(path, delimiter=",", ndmin=1)
        except (OSError, ValueError) as exc:
            raise ModuleError(f"dynamic.ground_acceleration_file {path}: not one number a line ({exc})") from None
        if samples.ndim != 1 or not np.all(np.isfinite(samples)):
            raise ModuleError(f"dynamic.ground_acceleration_file {path}: give one finite acceleration (m/s^2) a line")
    else:
        samples = np.asarray(table["ground_acceleration"], float)
    record = Record(float(table["ground_acceleration_dt"]), samples)
    return Scheme(float(table["alpha"]), int(table.get("substeps", 1))), record


def hermite_weights(substeps: int) -> np.ndarray:
    """(substeps, 3, 6): value, first and second derivative (per unit tau) at tau = j/m, j = 1..m, of the
    quintic Hermite basis on [0, 1] over (y0, y0', y0'', y1, y1', y1'') (derivatives per unit tau)."""
    from numpy.polynomial import Polynomial as P

    basis = [P([1, 0, 0, -10, 15, -6]), P([0, 1, 0, -6, 8, -3]), P([0, 0, 0.5, -1.5, 1.5, -0.5]),
             P([0, 0, 0, 10, -15, 6]), P([0, 0, 0, -4, 7, -3]), P([0, 0, 0, 0.5, -1, 0.5])]
    taus = np.arange(1, substeps + 1) / substeps
    return np.array([[[b.deriv(k)(t) if k else b(t) for b in basis] for k in range(3)] for t in taus])


class DynamicSubstructure:
    """M, C, K over the interface DOFs (the first ``interface``) and internal DOFs, under the record ``ground``
    along ``influence``; integrated by :class:`Scheme` at the coordinator's dt (:meth:`open`)."""

    def __init__(self, mass: np.ndarray, damping: np.ndarray, stiffness: np.ndarray, interface: int,
                 influence: np.ndarray, ground: Record, scheme: Scheme) -> None:
        self.m, self.c, self.k = (np.asarray(x, float) for x in (mass, damping, stiffness))
        self.nb, self.n = int(interface), self.m.shape[0]
        self.influence = np.asarray(influence, float)
        if self.influence.shape != (self.n,):
            raise ModuleError(f"dynamic module: influence needs {self.n} entries (one per DOF), "
                              f"got {self.influence.size}")
        self.ground, self.scheme = ground, scheme
        self._shape = -(self.m @ self.influence)
        self.b, self.i = slice(0, self.nb), slice(self.nb, self.n)
        self.dt = 0.0
        self._cache = None
        self.settled = self._rest(0.0)
        self.pending: tuple[float, np.ndarray] | None = None
        """the committed command of the step after ``settled``: (time s, interface displacement m)"""

    def _rest(self, time: float) -> State:
        z = np.zeros(self.n)
        return State(time, z, z.copy(), z.copy(), np.zeros(self.nb))

    def open(self, dt: float) -> None:
        """Factor the internal DOFs' effective matrix at the sub-step dt / substeps; start at rest."""
        s, h = self.scheme, dt / self.scheme.substeps
        w = 1.0 + s.alpha
        effective = self.m + w * s.gamma * h * self.c + w * s.beta * h * h * self.k
        self.dt = float(dt)
        import scipy.linalg  # here, not at import: a site's --describe-config imports no linear algebra
        from scipy.linalg.lapack import dgetrs

        self._lu = (scipy.linalg.lu_factor(effective[self.i, self.i], check_finite=True)
                    if self.n > self.nb else None)
        self._dgetrs = dgetrs
        i, b = self.i, self.b
        self._blocks = [np.ascontiguousarray(x) for x in (self.m[i, b], self.c[i, i], self.c[i, b], self.k[i, i],
                                                          self.k[i, b], self.c[i], self.k[i])]
        self._cache: tuple[tuple[float, bytes], State] | None = None
        self._hermite = hermite_weights(s.substeps)
        self.settled, self.pending = self._rest(0.0), None

    # -- a step of the coordinator ---------------------------------------------------------------
    def trial(self, time: float, command: np.ndarray, step: int) -> np.ndarray:
        """G at the interface displacement ``command`` (m) at ``time`` (s): the force the module answers (N)."""
        if self.pending is None and abs(time - self.settled.time) <= 1e-9 * self.dt:
            rest = self._rest(time)  # the pre-test's probes: a step from rest, no ground motion
            return self._advance(rest, self._end(rest, command), time, loaded=False).g
        settled = self._settle(time, command, step)
        return self._advance(settled, self._end(settled, command), time).g

    def commit(self, time: float, command: np.ndarray, step: int) -> None:
        """``command`` at ``time`` becomes the committed command; the step before it is settled."""
        if self.pending is None and abs(time - self.settled.time) <= 1e-9 * self.dt:
            if np.any(command):
                raise StepRefused(step, "a dynamic module starts at rest: commit zero displacement at t = 0")
            return
        self.settled = self._settle(time, command, step)
        self.pending = (float(time), np.array(command, float))
        self._cache = None

    def _settle(self, time: float, command: np.ndarray, step: int) -> State:
        """The true state of the step before ``command``'s, from the interface acceleration ``command`` implies
        (the trial's, kept for the commit of the same command)."""
        key = (float(time), np.asarray(command, float).tobytes())
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self._settled_by(time, command, step))
        return self._cache[1]

    def _settled_by(self, time: float, command: np.ndarray, step: int) -> State:
        s, dt = self.scheme, self.dt
        base = self.settled
        expected = (base.time if self.pending is None else self.pending[0]) + dt
        if not math.isclose(time, expected, rel_tol=0.0, abs_tol=1e-6 * dt):
            raise StepRefused(step, f"a dynamic module steps at the coordinator's dt = {dt:g} s: its command at "
                                    f"t = {time:.9g} s, expected {expected:.9g} s (run it with alpha-OS, "
                                    "one evaluation per step)")
        if self.pending is None:  # at rest: d = v = 0 and command = dt^2 (1/2 - beta) a_0
            return self._at_rest(command / (dt * dt * (0.5 - s.beta)))
        b = self.b
        pd = base.d[b] + dt * base.v[b] + dt * dt * (0.5 - s.beta) * base.a[b]
        pv = base.v[b] + dt * (1.0 - s.gamma) * base.a[b]
        a = (command - pd - dt * pv) / (dt * dt * (s.gamma + 0.5))
        end = (pd + s.beta * dt * dt * a, pv + s.gamma * dt * a, a)
        return self._advance(base, end, self.pending[0])

    def _at_rest(self, interface_acceleration: np.ndarray) -> State:
        """The rest state at t = 0 with the interface accelerating: internal a_0 from M a_0 = f_0 at rest."""
        state = self._rest(self.settled.time)
        state.a[self.b] = interface_acceleration
        if self._lu is not None:
            i, b = self.i, self.b
            rhs = self._load(state.time)[i] - self.m[i, b] @ interface_acceleration
            state.a[i] = np.linalg.lstsq(self.m[i, i], rhs, rcond=None)[0]
        return state

    def _end(self, base: State, command: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The interface's (d, v, a) at the end of the step from ``base`` when it reaches ``command``."""
        s, dt, b = self.scheme, self.dt, self.b
        pd = base.d[b] + dt * base.v[b] + dt * dt * (0.5 - s.beta) * base.a[b]
        a = (command - pd) / (s.beta * dt * dt)
        return command, base.v[b] + dt * (1.0 - s.gamma) * base.a[b] + s.gamma * dt * a, a

    def _load(self, time: float) -> np.ndarray:
        """f = -M iota a_g(t) (N)."""
        return self._shape * self.ground(time)

    # -- the integration ---------------------------------------------------------------------------
    def _interface_path(self, base: State, end: tuple[np.ndarray, ...]) -> np.ndarray:
        """(substeps, 3, nb): the interface's d, v, a at every sub-step (the end values at the last)."""
        if self.scheme.substeps == 1:
            return np.array([end])
        dt, b = self.dt, self.b
        data = np.array([base.d[b], dt * base.v[b], dt * dt * base.a[b], end[0], dt * end[1], dt * dt * end[2]])
        path = self._hermite @ data  # per unit tau
        path[:, 1] /= dt
        path[:, 2] /= dt * dt
        path[-1] = np.array(end)
        return path

    def _advance(self, base: State, end: tuple[np.ndarray, ...], time: float, loaded: bool = True) -> State:
        """The step from ``base`` to ``time`` with the interface ending at ``end`` = (d, v, a); G by (1)."""
        s, w = self.scheme, 1.0 + self.scheme.alpha
        h = (time - base.time) / s.substeps if loaded else self.dt / s.substeps
        state = self._integrate(base, self._interface_path(base, end), h, loaded)
        state.time = time
        b = self.b
        q = self.m[b] @ state.a + w * self._static(state, loaded) - s.alpha * self._static(base, loaded)
        state.g = (q + s.alpha * base.g) / w
        return state

    def _integrate(self, base: State, path: np.ndarray, h: float, loaded: bool) -> State:
        """The sub-steps of ``h`` s from ``base`` with the interface following ``path`` (substeps, 3, nb)."""
        state = base.copy()
        for j in range(self.scheme.substeps):
            state = self._substep(state, path[j], base.time + (j + 1) * h, h, loaded)
        return state

    def _static(self, state: State, loaded: bool) -> np.ndarray:
        """(C v + K d - f) at the interface rows (N)."""
        b = self.b
        out = self.c[b] @ state.v + self.k[b] @ state.d
        return out - self._load(state.time)[b] if loaded else out

    def _substep(self, old: State, interface: np.ndarray, time: float, h: float, loaded: bool) -> State:
        """One HHT step of the internal DOFs (alpha-OS with K_I = K) with the interface's d, v, a imposed."""
        s, b, i = self.scheme, self.b, self.i
        w = 1.0 + s.alpha
        new = State(time, old.d.copy(), old.v.copy(), old.a.copy(), old.g)
        new.d[b], new.v[b], new.a[b] = interface
        if self._lu is None:
            return new
        pd = old.d[i] + h * old.v[i] + h * h * (0.5 - s.beta) * old.a[i]
        pv = old.v[i] + h * (1.0 - s.gamma) * old.a[i]
        load_new = self._load(time)[i] if loaded else 0.0
        load_old = self._load(old.time)[i] if loaded else 0.0
        m_ib, c_ii, c_ib, k_ii, k_ib, c_i, k_i = self._blocks
        rhs = -(m_ib @ new.a[b]) - w * (c_ii @ pv + c_ib @ new.v[b] + k_ii @ pd + k_ib @ new.d[b] - load_new)
        rhs += s.alpha * (c_i @ old.v + k_i @ old.d - load_old)
        a = self._dgetrs(self._lu[0], self._lu[1], rhs)[0]
        new.a[i], new.d[i], new.v[i] = a, pd + s.beta * h * h * a, pv + s.gamma * h * a
        return new

    # -- checkpoints ------------------------------------------------------------------------------------
    def save(self) -> dict[str, object]:
        """The committed state, exact (floats as their shortest repr round-trip in JSON)."""
        st = self.settled
        return {"time": st.time, "d": st.d.tolist(), "v": st.v.tolist(), "a": st.a.tolist(), "g": st.g.tolist(),
                "pending": None if self.pending is None else [self.pending[0], self.pending[1].tolist()]}

    def load(self, data: dict) -> None:
        """Return to a state given by :meth:`save`."""
        try:
            vectors = [np.array(data[k], float) for k in ("d", "v", "a")]
            g = np.array(data["g"], float)
            pending = data["pending"]
            state = State(float(data["time"]), *vectors, g)
            pend = None if pending is None else (float(pending[0]), np.array(pending[1], float))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ModuleError(f"dynamic module: not a checkpoint of one: {exc!r}") from None
        if any(v.shape != (self.n,) for v in vectors) or g.shape != (self.nb,) or (
                pend is not None and pend[1].shape != (self.nb,)):
            raise ModuleError(f"dynamic module: the checkpoint's state is not of this module's {self.n} DOFs")
        self.settled, self.pending, self._cache = state, pend, None


class DynamicModule(StepLedger):
    """A module of ``kind`` whose restoring force is a :class:`DynamicSubstructure`'s G (equation 1, N) at its
    interface ``dofs``; it describes itself as dynamic and reports no mass for the coordinator."""

    def __init__(self, kind: str, dofs: tuple[Dof, ...], substructure: DynamicSubstructure,
                 info: dict[str, str] | None = None) -> None:
        super().__init__()
        if len(dofs) != substructure.nb:
            raise ModuleError(f"{kind} module: {len(dofs)} DOFs but {substructure.nb} interface DOFs")
        self.kind, self.dofs, self.substructure = kind, tuple(dofs), substructure
        self._info = dict(info or {})
        self._last: tuple[float, np.ndarray] | None = None

    def describe(self) -> Description:
        s = self.substructure
        return Description(kind=self.kind, dofs=self.dofs, info={
            **self._info, "dynamic": "alpha-os", "alpha": repr(s.scheme.alpha), "substeps": str(s.scheme.substeps),
            "internal_dofs": str(s.n - s.nb), "ground_motion": s.ground.probes()})

    def _on_open(self, session: Session) -> None:
        self.substructure.open(session.dt)

    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        self._last = (command.time, command.displacement)
        return command.displacement, self.substructure.trial(command.time, command.displacement, step)

    def _accept(self, step: int) -> None:
        """The command becomes the committed one (the step before it is settled)."""
        if self._last is not None:
            self.substructure.commit(*self._last, step)

    def _discard(self) -> None:
        """A trial leaves no state behind: each is computed from the committed state."""

    def _save_state(self) -> object:
        return self.substructure.save()

    def _load_state(self, state: object) -> None:
        if not isinstance(state, dict):
            raise ModuleError(f"{self.kind} module: not a checkpoint of a dynamic module")
        self.substructure.load(state)
