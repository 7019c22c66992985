"""What in-process modules share: the step ledger (ordering, idempotency, trial/commit) and the
rules for configuration files.  The interface itself is the wire's (:mod:`hybridsim.wire.contract`).
"""

from __future__ import annotations

import abc
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim import shipped
from hybridsim.wire.contract import (Command, Description, ModuleError, Record, Session, StepRefused, StepResult,
                                    check_vector)


MAX_CONFIG_NUMBERS = 4_000_000
"""largest count of numbers a module configuration may hold (a 2000x2000 matrix)"""
MAX_CONFIG_FILE_BYTES = 256 * 2**20


SHIPPED_FILES = (Path(__file__).resolve().parent, Path(__file__).resolve().parents[1] / "coordinator" / "data")
"""folders of files shipped with hybridsim (models, benchmark data) that any configuration may name
(also as ``hybridsim:NAME``, :mod:`hybridsim.shipped`)"""


def resolve_config_path(base_dir: Path, value: object, key: str) -> Path:
    """A file named in a module's configuration, which must lie inside the configuration's folder.

    A site reads files only from the folder its configuration lives in (or below) and from the
    files shipped with hybridsim, so that a configuration cannot make a daemon read, or run,
    anything else on the machine.
    """
    if not isinstance(value, str) or not value:
        raise ModuleError(f"{key} must be a file name (relative to the configuration's folder)")
    root = Path(base_dir).resolve()
    try:
        path = shipped.resolve(value, root).resolve()
    except FileNotFoundError as exc:
        raise ModuleError(f"{key}: {exc}") from None
    if not any(path.is_relative_to(allowed) for allowed in (root, *SHIPPED_FILES)):
        raise ModuleError(f"{key} = {value!r} lies outside the configuration's folder {root}; "
                          "put the file next to the configuration (or below it)")
    if not path.is_file():
        raise ModuleError(f"{key} = {value!r} does not exist in {root} (paths are relative to the configuration's folder)")
    if path.stat().st_size > MAX_CONFIG_FILE_BYTES:
        raise ModuleError(f"{key} = {value!r} is larger than {MAX_CONFIG_FILE_BYTES // 2**20} MiB")
    return path


def checkpoint_json(state: bytes, what: str) -> Any:
    """The JSON of a checkpoint ``state``; ModuleError naming ``what`` when it is not JSON or nests deeper than
    the parser goes (a hostile checkpoint must be refused, never crash the call with a RecursionError)."""
    try:
        return json.loads(state)
    except RecursionError:
        raise ModuleError(f"{what}: the checkpoint nests too deeply to be one") from None
    except ValueError as exc:
        raise ModuleError(f"{what}: the checkpoint is not JSON: {exc}") from None


CHECKPOINT_INT_WIDTH = 20
"""characters of every integer field of a checkpoint (any int64): its size does not grow with the step number"""


def fixed_width_json(value: object) -> str:
    """``value`` as JSON in which every integer field of an object (a step number, a count of rows) takes
    :data:`CHECKPOINT_INT_WIDTH` characters, right-aligned (the leading spaces are JSON whitespace: any JSON
    reader reads it, and reads earlier checkpoints as before); arrays and other values as ``json.dumps``."""
    if not isinstance(value, Mapping):
        return json.dumps(value)
    fields = (f"{json.dumps(str(key))}: " + (f"{item:{CHECKPOINT_INT_WIDTH}d}" if isinstance(item, int)
                                             and not isinstance(item, bool) else fixed_width_json(item))
              for key, item in value.items())
    return "{" + ", ".join(fields) + "}"


def count_numbers(value: object) -> int:
    """How many numbers a configuration value holds (nested lists and tables)."""
    if isinstance(value, Mapping):
        return sum(count_numbers(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(count_numbers(v) for v in value)
    return 1 if isinstance(value, (int, float)) else 0


def _same_command(a: Command, b: Command) -> bool:
    """Whether ``a`` repeats ``b``: the same time and the same vectors (a retry), bit for bit."""
    def same(x: object, y: object) -> bool:
        if x is None or y is None:
            return x is None and y is None
        return np.array_equal(np.asarray(x, float), np.asarray(y, float))

    return (float(a.time) == float(b.time) and same(a.displacement, b.displacement)
            and same(a.velocity, b.velocity) and same(a.acceleration, b.acceleration) and same(a.force, b.force))


class StepLedger(abc.ABC):
    """Step bookkeeping shared by in-process modules: ordering, idempotency, trial/commit.

    Subclasses implement the physics in :meth:`_check`, :meth:`_trial`,
    :meth:`_accept` and :meth:`_discard`; this base class guarantees that a
    retried ``execute(n)`` returns the stored result of step n, that step IDs
    increase, and that a new proposal first discards an uncommitted trial.
    """

    def __init__(self) -> None:
        self._session: Session | None = None
        self._proposed: tuple[int, Command] | None = None
        self._executed: StepResult | None = None
        self._last_step = -1
        self._committed_step = -1
        self.stats = {"proposed": 0, "executed": 0, "committed": 0, "retried": 0}

    # -- the interface -------------------------------------------------------
    @abc.abstractmethod
    def describe(self) -> Description: ...

    def records(self, since: int = 0, final: bool = True) -> list[Record]:
        """The module's own records of this session (none unless a kind keeps some; ``since``, ``final``:
        see :class:`hybridsim.wire.contract.Record`)."""
        return []

    def open(self, session: Session) -> None:
        names = self.describe().dof_names
        if tuple(session.dof_names) != names:
            raise ModuleError(f"session DOFs {list(session.dof_names)} do not match the module's DOFs {list(names)}")
        if not (session.dt > 0 and math.isfinite(session.dt)):
            raise ModuleError(f"session dt must be a positive number of seconds, not {session.dt!r}")
        self._session = session
        self._on_open(session)

    def propose(self, step: int, command: Command) -> None:
        self._require_open()
        n = len(self._session.dof_names)  # type: ignore[union-attr]
        if self._proposed is not None and step == self._proposed[0]:
            if _same_command(command, self._proposed[1]):
                self.stats["retried"] += 1
                return
            raise StepRefused(step, "step was already proposed with a different command (time, displacement, "
                                    "velocity or acceleration)")
        if step <= self._last_step:
            raise StepRefused(step, f"step IDs must increase: the last step was {self._last_step}")
        if not math.isfinite(command.time):
            raise StepRefused(step, f"the command's time must be a finite number of seconds, not {command.time}")
        disp = check_vector(step, "displacement", command.displacement, n)
        vel = None if command.velocity is None else check_vector(step, "velocity", command.velocity, n)
        acc = None if command.acceleration is None else check_vector(step, "acceleration", command.acceleration, n)
        command = Command(float(command.time), disp, vel, acc, self._checked_forces(step, command.force))
        self._check(step, command)
        if self._executed is not None and self._executed.step > self._committed_step:
            self._discard()
        self._proposed = (step, command)
        self._executed = None
        self._last_step = step
        self.stats["proposed"] += 1

    force_dofs = 0
    """how many DOFs the module holds in force control (targets a lab protocol's client may command)"""

    def _checked_forces(self, step: int, force: np.ndarray | None) -> np.ndarray | None:
        """A command's force targets, checked (None: none given)."""
        if force is None:
            return None
        if not self.force_dofs:
            raise StepRefused(step, "the module has no force-controlled DOF: command displacements only")
        return check_vector(step, "force", force, self.force_dofs)

    def execute(self, step: int) -> StepResult:
        self._require_open()
        if self._executed is not None and self._executed.step == step:
            self.stats["retried"] += 1
            return self._executed
        if self._proposed is None or self._proposed[0] != step:
            raise StepRefused(step, "execute without a matching propose")
        disp, force = self._trial(step, self._proposed[1])
        self._executed = StepResult(step, np.array(disp, float), np.array(force, float), self._changed_counters())
        self.stats["executed"] += 1
        return self._executed

    def _changed_counters(self) -> dict[str, float] | None:
        """The module's event counters (cumulative) that changed since its previous result, carried with the
        result to the coordinator during the run (:attr:`StepResult.counters`); None: none changed (a kind
        that counts nothing keeps this)."""
        return None

    def commit(self, step: int) -> None:
        self._require_open()
        if step == self._committed_step:
            self.stats["retried"] += 1
            return
        if self._executed is None or self._executed.step != step:
            raise StepRefused(step, "commit of a step that was not executed")
        self._accept(step)
        self._committed_step = step
        self.stats["committed"] += 1

    def checkpoint(self) -> bytes:
        """The committed state as JSON bytes (no pickle: a checkpoint may cross the wire), its integer fields of
        fixed width (:func:`fixed_width_json`)."""
        self._require_open()
        return fixed_width_json({"committed_step": self._committed_step, "last_step": self._last_step,
                                 "state": self._save_state()}).encode()

    def restore(self, state: bytes) -> None:
        """Return to a checkpointed committed state; any trial is discarded."""
        self._require_open()
        what = f"checkpoint is not a {type(self).__name__} checkpoint"
        data = checkpoint_json(state, what)
        try:
            committed, last, inner = int(data["committed_step"]), int(data["last_step"]), data["state"]
        except (ValueError, KeyError, TypeError, OverflowError) as exc:
            raise ModuleError(f"{what}: {exc}") from exc
        try:
            self._load_state(inner)
        except RecursionError:
            raise ModuleError(f"{what}: its state nests too deeply") from None
        self._committed_step = committed
        self._last_step = max(committed, last)
        self._proposed = None
        self._executed = None

    def close(self) -> dict[str, float]:
        self._session = None
        return {k: float(v) for k, v in self.stats.items()}

    @classmethod
    def checkpoint_refusal(cls, config: Mapping[str, Any]) -> str | None:
        """Why a module of ``config`` cannot take checkpoints (None: it can); an experiment that asks for
        checkpoints (``output.checkpoint_every``) is refused with it before anything starts."""
        return None

    @classmethod
    def session_refusal(cls, config: Mapping[str, Any], dt: float) -> str | None:
        """Why a module of ``config`` cannot run steps of ``dt`` (s) (None: it can); an experiment whose
        ``experiment.dt`` it cannot run is refused with it before anything starts."""
        return None

    # -- for subclasses ------------------------------------------------------
    def _on_open(self, session: Session) -> None:
        """Prepare for a test (allocate state); default: nothing."""

    def _check(self, step: int, command: Command) -> None:
        """Refuse a command before anything moves (raise StepRefused); default: accept."""

    @abc.abstractmethod
    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        """Impose the command on a trial state; return (reached displacement, restoring force)."""

    @abc.abstractmethod
    def _accept(self, step: int) -> None:
        """Make the trial state the committed state."""

    @abc.abstractmethod
    def _discard(self) -> None:
        """Return the trial state to the committed state."""

    def _save_state(self) -> object:
        """The committed physical state, JSON-serialisable; default: stateless."""
        return None

    def _load_state(self, state: object) -> None:
        """Load what :meth:`_save_state` returned; default: stateless."""

    def _require_open(self) -> None:
        if self._session is None:
            raise ModuleError("the module is not open: call open(session) first")

    @property
    def session(self) -> Session:
        self._require_open()
        return self._session  # type: ignore[return-value]
