"""The coordinator's client of its results writer: the file created or reopened, the writer process started, the
rows shared and sent, checkpoints and records queued, the writer's replies taken, the paced writer granted the
loop's sleep (:mod:`hybridsim.coordinator.recorder.pacing`)."""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import multiprocessing.util
import os
import select
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Mapping, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.interrupts import stop_noted
from hybridsim.coordinator.recorder import layout
from hybridsim.coordinator.recorder.pacing import FREE, Grant, beside_loop, hurried
from hybridsim.coordinator.recorder.read import read_attributes
from hybridsim.coordinator.recorder.shared import Activity, SharingError, share
from hybridsim.coordinator.recorder.writer import serve
from hybridsim.coordinator.window import RowWindow
from hybridsim.wire.contract import Record
from hybridsim.wire.daemons_folders import multiprocessing_folder

QUEUE_WRITES = 4
"""blocks of rows, checkpoints and records that may wait for the writer process before the step loop waits for it
(with 1024-row blocks, 4096 rows: half the window, so the loop waits for the writer before the window is full)"""

COUNTS = ("loop_writer_waits", "writer_hurried", "writer_behind")
"""a paced run's counts of its writer: the loop waited for it (letting it work freely: its window or queue
full, a checkpoint, the end); it fell :data:`~hybridsim.coordinator.recorder.pacing.BEHIND_ROWS` behind (and
started pieces to the end of each grant); it fell :data:`~hybridsim.coordinator.recorder.pacing.DEFERRED_ROWS`
behind (and wrote beside the loop)"""

JOIN_S = 5.0
"""how long to wait for the writer process to end once its pipe says it has (s)"""

STALL_S = 1.0
"""a writer that has had work without answering for this long is stalled (s): the loop holds its steps and the
run says so (issue 32: a SIGSTOPped writer held one step 29.8 s without a word)"""

POLL_S = 0.25
"""how often a wait for the writer looks at the clock to report a stall (s)"""

_SCHED_GETCPU = getattr(ctypes.CDLL(None), "sched_getcpu", None)
"""the C library's ``sched_getcpu`` (glibc, musl), where it has one"""

_NO_MAIN = types.ModuleType("__main__")
"""the main module the writer process is told the coordinator has: none to import"""

_LAUNCHING = threading.Lock()
"""one writer started at a time (each puts the coordinator's main module back)"""


class Recorder:
    """Append-only writer of one run's response history, its model and its checkpoints.

    ``columns`` maps each dataset name to its width (0 for a scalar per step).  The file is
    created by the constructor, which then starts the **writer process** (:func:`hybridsim.coordinator.recorder.writer.serve`: multiprocessing's
    forkserver, never a fork of the coordinator and its gRPC threads; :data:`WRITER_NICE` lower in
    priority), the only one to write the file from then on: the coordinator's GIL is never held by an
    HDF5 call.  After :meth:`start`, :meth:`submit` copies the window's rows up to a row count into
    shared memory (a ring of the window's size, same slots) and asks the writer to write them;
    :meth:`checkpoint` and :meth:`records` send their data through the writer's pipe.  At most
    :data:`QUEUE_WRITES` requests wait for the writer; beyond that the caller waits (it never drops a row).

    Guarantees: ``completed_steps`` (and :attr:`rows`) move only after the writer says the rows are
    written and flushed; ``observe`` then sees them here, from the window (whose rows are not
    overwritten before: the step loop waits for :attr:`rows`).  A write or flush error, or a disk
    without room for the next write, sets :attr:`failure` to one line (``results file: no space left
    on device (...)``) and the writer writes nothing more.  When the disk was found full before
    writing, the file is intact and :meth:`close` still records the status; when the operating system
    refused a write, the file is abandoned: its descriptor is pointed at /dev/null so that closing it
    cannot write into it again, and what it holds is what was flushed before (its status stays
    ``running``).  A writer process that ended is a failure line too (never a wait without end); the
    file is then as a crash leaves it (readable, resumable).  The writer ignores SIGINT and SIGTERM (it
    is in the coordinator's process group: a Ctrl-C must not end it before the coordinator has closed
    the file) and ends when its pipe closes (the coordinator ended, however), after its current write.

    Replies are taken when the coordinator calls in (:meth:`collect`, and every method here): nothing
    runs in the coordinator between its calls.

    Checkpoints are double-buffered (``/checkpoint/slot0``, ``slot1``): a new one is written into
    the slot not in use, flushed, and only then does ``/checkpoint/current`` = [slot, step, step_id]
    point to it, so a crash at any moment leaves the last complete checkpoint readable.
    """

    def __init__(self, path: str | Path, columns: Mapping[str, int], *, dofs: Sequence[str],
                 **created: Any) -> None:
        """Create the results file (``columns``, ``dofs`` and ``created``: see
        :func:`hybridsim.coordinator.recorder.layout.create`) and start its writer."""
        self.path = Path(path)
        layout.create(self.path, columns, dofs=dofs, **created)
        self._launch(0)

    @classmethod
    def reopen(cls, path: str | Path, rows: int, streamed: Mapping[str, Sequence[Record]] | None = None,
               attrs: Mapping[str, str] | None = None) -> "Recorder":
        """Continue writing a results file after its row ``rows - 1`` (later rows are dropped); the modules'
        streamed records (``streamed``: their names and columns) are continued where the modules resume;
        ``attrs`` replace the file's attributes of those names (the experiment as resumed)."""
        self = cls.__new__(cls)
        self.path = Path(path)
        claimed = int(read_attributes(self.path).get("completed_steps", 0))
        layout.reopen(self.path, rows, claimed, streamed, attrs)
        self._launch(rows)
        return self

    def _launch(self, rows: int) -> None:
        """Start the writer process over the file as it is closed now, holding ``rows`` rows."""
        self.rows = rows
        """rows on disk (the file's completed_steps)"""
        self.failure: str | None = None
        self.activity = Activity()
        """when the writer process wrote (what real-time lateness is compared with)"""
        self._submitted = self._due = rows
        """rows sent to the writer; rows submitted (sent, or due at the next collect of a paced run)"""
        self._paced = False
        self._counts = dict.fromkeys(COUNTS, 0)
        self._behind = dict.fromkeys(("writer_hurried", "writer_behind"), False)
        """whether a paced writer is hurried, or writes beside the loop, now (see :mod:`.pacing`)"""
        self._pending = 0
        """requests sent to the writer and not answered yet"""
        self._sent = 0
        """requests sent to the writer (its numbers for them: 1, 2, ...)"""
        self._closed = False
        """the writer has closed the file, or has ended"""
        self._writer_lost = False
        """the writer ended without closing the file"""
        self._answered = time.perf_counter()
        """when the writer last answered, or was given work while it had none (s of ``time.perf_counter``)"""
        self._stalled_s = 0.0
        """the stall reported last (s; 0: none)"""
        self._held = False
        """a stall was reported since the last :meth:`hold_while_stalled`"""
        self.on_stall: Callable[[float], None] | None = None
        """told how long the writer has been stalled, about every second while it is, then 0.0 once it answers"""
        self._window: RowWindow | None = None
        self._observe: Callable[[int, Mapping[str, np.ndarray]], None] | None = None
        self._ring: dict[str, np.ndarray] = {}
        """the rows shared with the writer: arrays like the window's, over a mapping of a file in
        :data:`hybridsim.coordinator.recorder.shared.SHARED_DIR` unlinked as soon as the writer has mapped it too"""
        multiprocessing_folder()  # its forkserver's socket in a folder named for this process (swept after kill -9)
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([serve.__module__])  # each writer is a fork of a server that has imported h5py
        requests, self._requests = context.Pipe(duplex=False)
        self._replies, replies = context.Pipe(duplex=False)
        grants, self._grants = context.Pipe(duplex=False)
        os.set_blocking(self._grants.fileno(), False)  # a grant the writer has no room for is dropped, see _grant
        self._process = context.Process(target=serve, args=(str(self.path), requests, replies, grants),
                                        name=f"results writer {self.path.name}")
        # multiprocessing would run the coordinator's main script again in the writer (a script without the
        # `if __name__ == "__main__":` guard would start its whole run there): the writer is told of none
        with _LAUNCHING:
            main, sys.modules["__main__"] = sys.modules["__main__"], _NO_MAIN
            try:
                self._process.start()
            finally:
                sys.modules["__main__"] = main
        requests.close()
        replies.close()
        grants.close()
        multiprocessing.util.Finalize(self, _close_pipes, args=((self._requests, self._grants),), exitpriority=10)
        """the pipes close, so the writer ends, at the coordinator's exit before multiprocessing joins it"""

    # -- the step loop's side ----------------------------------------------------------------------
    def start(self, window: RowWindow, observe: Callable[[int, Mapping[str, np.ndarray]], None] | None = None,
              paced: bool = False) -> None:
        """Share a ring of ``window``'s size with the writer and wait until it has the file open for
        writing; ``observe(first_row, rows)`` sees every block written (called here, from the window).

        ``paced``: a real-time loop, which calls :meth:`collect` while it sleeps; :meth:`submit` then leaves
        the rows to it (and sends them itself when the writer is too far behind, :func:`.pacing.beside_loop`), and
        the writer works only in the loop's sleep, a piece at a time (see :meth:`collect`)."""
        self._window, self._observe = window, observe
        layout = [(key, values.shape, values.dtype.str) for key, values in window.arrays.items()]
        try:
            name, self.activity.board, self._ring = share(layout, f".{self.path.name}-rows-")
        except SharingError as exc:
            self.failure = str(exc)
        else:
            try:
                self._send(("window", name, layout, paced))
                self._wait(lambda: self._pending == 0)
            finally:
                os.unlink(name)  # the writer has mapped it, or never will
        self._paced = paced

    def submit(self, rows: int) -> None:
        """Send the window's rows up to ``rows - 1`` to the writer (waits while :data:`QUEUE_WRITES` wait); in a
        paced run the next :meth:`collect` sends them, unless the writer is too far behind
        (:func:`.pacing.beside_loop`): the loop has not slept enough for it, and it is let write beside the loop
        (counted in :meth:`counts`)."""
        self._due = max(self._due, rows)
        if not self._paced:
            self._send_rows()
            return
        self._take()
        if self._count_episode("writer_behind", beside_loop(self._due - self.rows)):
            self.let_write()

    def collect(self, until: float) -> None:
        """(a paced run, while the loop sleeps until wall time ``until``, s of ``time.perf_counter``) Take the
        writer's replies; if they brought no rows to observe, send the rows due; let the writer work until then.

        A paced writer does its work in pieces (a dataset's rows, a flush, ...) and starts a piece only within
        such a grant (:class:`.pacing.Grant`): it runs while the loop and the daemons are idle, not beside a step.
        A loop that waits for the writer (its window or queue full, a checkpoint, the end) lets it run freely."""
        if not self._take() and self._due > self._submitted and self._pending < QUEUE_WRITES:
            self._send_rows()
        if self._pending:
            self._grant(until)

    def counts(self) -> dict[str, int]:
        """A paced run's counters (:data:`COUNTS`)."""
        return dict(self._counts)

    def let_write(self) -> None:
        """(a paced run that stops stepping for a while: a hold) Send the rows due and let the writer do all it
        has been sent, on any core, without waiting for it."""
        if self._paced and self.failure is None:
            self._send_rows()
            self._grant(FREE)

    def checkpoint(self, step: int, step_id: int, state: Mapping[str, np.ndarray], modules: Mapping[str, bytes]) -> None:
        """Send a consistent restart point after ``step`` (its rows are sent first)."""
        self._due = max(self._due, step + 1)
        self._send_rows()
        if self.failure is None:
            self._send(("checkpoint", step, step_id, dict(state), dict(modules)))

    def records(self, module: str, records: Sequence[Record]) -> None:
        """Send a block of ``module``'s streamed records (written at their ``first_row``)."""
        self._take()
        if self.failure is None and records:
            self._send(("records", module, list(records)))

    def wait_written(self, rows: int) -> None:
        """Block until ``rows`` rows (submitted) are on disk or the writer failed."""
        self._send_rows()
        self._wait(lambda: self.rows >= rows or self.failure is not None)

    def hold_while_stalled(self) -> bool:
        """(before a step) Wait while the writer is stalled (:data:`STALL_S` without an answer to work it has),
        so that no step is computed that the file may never hold; whether it was stalled since the last call (a
        paced loop then restarts its clock)."""
        if self._pending and time.perf_counter() - self._answered >= STALL_S:
            self._wait(lambda: time.perf_counter() - self._answered < STALL_S or not self._pending)
        held, self._held = self._held, False
        return held

    def _send_rows(self) -> None:
        """Copy the rows due into the shared ring and ask the writer to write them."""
        if self._due > self._submitted and self.failure is None and self._window is not None:
            window = self._window  # the slots of these rows held rows written already (the loop waits for them)
            for key, values in window.arrays.items():
                for _, slot, count in window.segments(self._submitted, self._due):
                    self._ring[key][slot:slot + count] = values[slot:slot + count]
            self._submitted = self._due
            self._send(("rows", self._due))

    def close(self, status: str, summary: Mapping[str, Any] | None = None,
              stop: Mapping[str, Any] | None = None) -> None:
        """Write what is sent, then mark the run ``completed`` or ``stopped: reason`` and close.

        ``stop`` (attribute "stop", JSON) says why and where a stopped run stopped: reason, step, time_s,
        module.  After a failure nothing more is written: a file found full keeps its rows and gets the
        status (the reserve is there for it); an abandoned file is only released.
        """
        if self._process is None:
            return
        self._send_rows()
        self._send(("close", status, summary, stop), queued=False)
        self._wait(lambda: self._closed)
        if self._writer_lost:  # the writer wrote no status: the coordinator writes it beside the file
            layout.write_status(self.path, status, self.rows, summary, stop)
        self._process.join(JOIN_S)
        self._process = None
        _close_pipes((self._requests, self._replies, self._grants))
        self.activity.board, self._ring = None, {}  # the mapping goes with its last array

    def _send(self, request: tuple[Any, ...], queued: bool = True) -> None:
        """Send a request to the writer, after waiting for room among the requests it has not answered."""
        if queued:
            self._wait(lambda: self._pending < QUEUE_WRITES or self.failure is not None)
        if self._closed:
            return
        try:
            self._requests.send(request)
        except OSError:  # the writer has ended
            self._lost()
            return
        if not self._pending:
            self._answered = time.perf_counter()
        self._pending += 1
        self._sent += 1

    def _grant(self, until: float) -> None:
        """Let a paced writer work on the requests sent so far until wall time ``until`` (s): start pieces
        :class:`.pacing.Grant`; on the core this loop runs
        on, which it is leaving to sleep (a grant without end: on any core).

        On the core just left the writer wakes at once and runs warm: woken on the other, idle core of a 2-vCPU
        VM, its first pieces took 1.6 times longer (p50 417 vs 257 us, two runs in a row) and it fell behind."""
        if self._closed:
            return
        behind = self._due - self.rows
        self._count_episode("writer_hurried", hurried(behind))
        grant = Grant.of(until, behind, self._sent, _current_cpu()).pack()
        while True:
            try:
                self._grants.send_bytes(grant)  # one write of less than PIPE_BUF bytes: all of it, or none
                return
            except BlockingIOError:  # the writer, in a long piece, has not read its grants (64 KiB of them)
                if until != FREE:
                    return  # dropped: the next sleep grants again
                select.select([], [self._grants], [], 1.0)
            except OSError:  # the writer has ended: its replies' pipe says so
                return

    def _count_episode(self, key: str, now: bool) -> bool:
        """Count an episode of ``key`` (one of ``_behind``) if it begins ``now``; whether it lasts."""
        if now and not self._behind[key]:
            self._counts[key] += 1
        self._behind[key] = now
        return now

    def _wait(self, done: Callable[[], bool]) -> None:
        """Take the writer's replies until ``done()``; a writer that ended ends the wait (its pipe closes).  A
        paced writer is let do all it has been sent without waiting for the loop's sleep."""
        self._take()
        if not done() and self._paced:
            self._counts["loop_writer_waits"] += 1
            self._grant(FREE)
        if not done():
            self._stall(time.perf_counter() - self._answered)  # a hold for a stall says so at once
        while not done() and not self._closed:
            if not self._replies.poll(POLL_S):  # a reply, the end of the pipe, or time to look at the clock
                self._stall(time.perf_counter() - self._answered)
                if self._stalled_s and stop_noted():
                    self._kill()  # a Ctrl-C or SIGTERM does not wait for a stalled writer: its pipe ends now
            self._take()
        if self._stalled_s:
            self._stall(0.0)

    def _stall(self, seconds: float) -> None:
        """Report a stall of ``seconds`` (s) once it is :data:`STALL_S` long, then each whole second; its end
        (0.0)."""
        if (seconds >= STALL_S and int(seconds) > int(self._stalled_s)) or (not seconds and self._stalled_s):
            self._stalled_s, self._held = seconds, True
            if self.on_stall is not None:
                self.on_stall(seconds)

    def _take(self) -> bool:
        """Take the replies the writer has sent (never waits): rows on disk (observed, then counted), failure;
        whether rows were observed."""
        observed = False
        try:
            while not self._closed and self._replies.poll():
                kind, rows, failure = self._replies.recv()
                self._pending -= 1
                self._answered = time.perf_counter()
                if rows > self.rows:
                    if self._observe is not None and self._window is not None:
                        window = self._window
                        for row, slot, count in window.segments(self.rows, rows):
                            self._observe(row, {k: v[slot:slot + count] for k, v in window.arrays.items()})
                        observed = True
                    self.rows = rows
                self.failure = self.failure or failure
                if kind == "closed":
                    self._closed = True
        except (EOFError, OSError):
            self._lost()
        self.activity.sync()
        return observed

    def _kill(self) -> None:
        """End a stalled writer (SIGKILL): the file is then as a crash leaves it, and resumable."""
        if self._process is not None and self._process.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._process.pid, signal.SIGKILL)

    def _lost(self) -> None:
        """The writer process ended without closing the file: a failure line."""
        self._closed = self._writer_lost = True
        process = self._process
        if process is not None:
            process.join(JOIN_S)
        code = process.exitcode if process is not None else None
        how = (f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else
               f"exit code {code}" if code is not None else "it did not answer")
        self.failure = self.failure or (f"results file: the writer process ended ({how}) after writing at least "
                                        f"{self.rows} rows ({self.path} is as a crash leaves it; resume continues "
                                        "it from its last checkpoint)")



def _current_cpu() -> int:
    """The core the calling thread runs on (the C library's ``sched_getcpu``; -1 where there is none)."""
    return _SCHED_GETCPU() if _SCHED_GETCPU is not None else -1


def _close_pipes(pipes: Sequence[Connection]) -> None:
    """Close the coordinator's ends of the writer's pipes."""
    for pipe in pipes:
        pipe.close()
