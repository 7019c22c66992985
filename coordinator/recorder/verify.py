"""What of a results file is intact, said in one line within a bounded time.

:func:`verify` reads every dataset chunk by chunk with its checksums and both checkpoint slots with their
SHA-256 (:mod:`hybridsim.coordinator.recorder.layout`).  :func:`within` runs a check in a child process and
waits for it at most a bounded time: HDF5 may spin in its read-retry loop on a truncated or zeroed file (a
file opened for SWMR reading retries a metadata read that fails its checksum), and that loop answers no signal;
the child is killed instead, and the answer is one line.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h5py

from hybridsim.coordinator.recorder.layout import per_step
from hybridsim.coordinator.recorder.read import DamagedResults, _attributes, _slot, not_text, open_read
from hybridsim.wire.daemons_folders import multiprocessing_folder

OPEN_S = 6.0
"""how long opening a results file and reading its attributes may take (s) before it is given up as damaged: an
intact file opens in milliseconds; under the 10 s a tool must answer within"""

READ_BYTES_PER_S = 50e6
"""the slowest read rate a whole-file check is given time for (bytes/s), beyond :data:`OPEN_S`; a check of an
intact 100 MB file on this VM's disk took about 1 s"""


@dataclass
class Verdict:
    """What a check found: the file's claimed rows and status, the rows intact in every per-step dataset, the
    damaged places (in words), and the checkpoints that can be resumed ((step, slot), newest first)."""

    path: str
    status: str = "?"
    completed_steps: int = 0
    intact_rows: int = 0
    damaged: list[str] = field(default_factory=list)
    checkpoints: list[tuple[int, int]] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.damaged

    def line(self) -> str:
        """The verdict in one line."""
        resumable = (", ".join(f"step {step} (slot {slot})" for step, slot in self.checkpoints)
                     if self.checkpoints else "none")
        if self.intact:
            return (f"{self.path}: intact: {self.completed_steps} rows ({self.completed_steps - 1} completed steps, "
                    f"status {self.status}), every checksum matches; checkpoints that can be resumed: {resumable}")
        more = f" (and {len(self.damaged) - 1} more)" if len(self.damaged) > 1 else ""
        rows = f"rows 0-{self.intact_rows - 1}" if self.intact_rows else "no rows"
        return (f"{self.path}: damaged: {self.damaged[0]}{more}; intact: {rows} of {self.completed_steps} "
                f"(status {self.status}); checkpoints that can be resumed: {resumable}")


def verify(path: str | Path) -> Verdict:
    """Read all of a results file with its checksums (in this process: see :func:`within` for a bounded one)."""
    with open_read(path) as f:
        attrs = _attributes(f, strict=False)
        rows = int(attrs.get("completed_steps", 0))
        status = str(attrs.get("status", "?")).encode(errors="replace").decode()
        verdict = Verdict(str(path), status, rows, rows)
        verdict.damaged += [f"attribute {key!r} is not UTF-8 text (its bytes changed)" for key in not_text(attrs)]
        try:
            f.visititems(lambda name, obj: _check(verdict, name, obj))
        except (RuntimeError, KeyError) as exc:  # an object header or a link that fails its checksum
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            verdict.damaged.append(f"the file's layout fails its read ({reason})")
            verdict.intact_rows = 0
        _checkpoints(verdict, f)
    return verdict


def _check(verdict: Verdict, name: str, obj: Any) -> None:
    """Read one dataset, a chunk at a time; note its first chunk that fails."""
    if not isinstance(obj, h5py.Dataset) or name.startswith("checkpoint/slot"):
        return  # (a checkpoint slot is checked whole, against its SHA-256)
    if not obj.chunks or not obj.shape:
        try:
            obj[()]
        except OSError:
            verdict.damaged.append(f"/{name} fails its read")
        return
    stop = min(obj.shape[0], verdict.completed_steps) if per_step(name, obj) else obj.shape[0]
    step = obj.chunks[0]
    for first in range(0, stop, step):
        try:
            obj[first:min(first + step, stop)]
        except OSError:
            verdict.damaged.append(f"/{name} rows {first}-{min(first + step, stop) - 1} fail their checksum")
            if per_step(name, obj):
                verdict.intact_rows = min(verdict.intact_rows, first)
            return


def _pointer(verdict: Verdict, f: h5py.File) -> None:
    """Note a ``/checkpoint/current`` that points nowhere (resume refuses it, as it refuses a damaged file)."""
    current = f.get("checkpoint/current")
    try:
        slot, step, step_id = (int(v) for v in current[()]) if current is not None else (-1, 0, 0)
    except (OSError, ValueError):
        return  # (its chunk's failure is noted with the datasets)
    if slot != -1 and (slot not in (0, 1) or not 0 <= step < verdict.completed_steps or step_id < 0):
        verdict.damaged.append(f"/checkpoint/current points nowhere (slot {slot}, step {step}, step ID {step_id}): "
                               "resume refuses it")


def _checkpoints(verdict: Verdict, f: h5py.File) -> None:
    """The checkpoint slots whose SHA-256 matches and whose step is among the intact rows, newest first."""
    _pointer(verdict, f)
    found = []
    for slot in (0, 1):
        where = f.get(f"checkpoint/slot{slot}/where")
        if where is None:
            continue
        try:
            step, step_id = (int(v) for v in where[()])
            checkpoint, why = _slot(verdict.path, f, slot, step, step_id) if step >= 0 else (None, "")
        except (OSError, ValueError, DamagedResults):
            checkpoint, why = None, "fails its read"
        if checkpoint is not None and step < verdict.intact_rows:
            found.append((step, slot))
        elif why:
            verdict.damaged.append(f"the checkpoint in slot {slot} {why}")
    verdict.checkpoints = sorted(found, reverse=True)


def within(check: Callable[[str], Any], path: str | Path, seconds: float) -> Any:
    """``check(path)`` run in a child process, given at most ``seconds``: its result, or :class:`DamagedResults`
    (one line) when it does not answer in time or fails; a SIGINT or SIGTERM here ends the child too."""
    multiprocessing_folder()
    context = multiprocessing.get_context("forkserver")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_answer, args=(check, str(path), send), name=f"check {Path(path).name}")
    child.start()
    send.close()
    try:
        if not receive.poll(seconds):
            raise DamagedResults(f"{path}: not readable within {seconds:.0f} s (a truncated or zeroed file: HDF5 "
                                 "retries its reads); `hybridsim verify` on a copy says what is intact")
        ok, value = receive.recv()
    except EOFError:
        raise DamagedResults(f"{path}: reading it ended its reader ({_ended(child)})") from None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    if not ok:
        raise DamagedResults(value)
    return value


def _ended(child: multiprocessing.process.BaseProcess) -> str:
    child.join(1.0)
    return f"exit code {child.exitcode}"


def _answer(check: Callable[[str], Any], path: str, send: Any) -> None:
    """(child) Send (True, check(path)), or (False, the one line of what failed)."""
    try:
        send.send((True, check(path)))
    except DamagedResults as exc:
        send.send((False, str(exc)))
    except Exception as exc:  # noqa: BLE001 - HDF5 reports a damaged file as several types
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        send.send((False, f"{path}: not readable as a results file ({reason})"))


def verify_within(path: str | Path) -> Verdict:
    """:func:`verify` given :data:`OPEN_S` plus the time to read the file at :data:`READ_BYTES_PER_S`."""
    if not Path(path).is_file():
        raise DamagedResults(f"{path}: not found")
    return within(verify, path, OPEN_S + os.path.getsize(path) / READ_BYTES_PER_S)


def readable_within(path: str | Path) -> dict[str, Any]:
    """The attributes of a results file read within :data:`OPEN_S` (before a tool reads more of it)."""
    if not Path(path).is_file():
        raise DamagedResults(f"{path}: not found")
    return within(_read_attributes, path, OPEN_S)


def _read_attributes(path: str) -> dict[str, Any]:
    with open_read(path) as f:
        return _attributes(f)
