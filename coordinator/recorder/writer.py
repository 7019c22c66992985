"""The writer process: the only one to write a results file once its run has started.

Started by :class:`hybridsim.coordinator.recorder.client.Recorder` from multiprocessing's forkserver (a fresh
interpreter that has imported h5py; the coordinator, which runs gRPC threads, is never forked), at
:data:`WRITER_NICE`.  It takes requests through one pipe (the shared memory to attach, rows to write, a
checkpoint, a module's records, close), answers each through another with the rows on disk and any failure, and
in a paced run reads the coordinator's grants from a third (:mod:`hybridsim.coordinator.recorder.pacing`).  It
ignores SIGINT and SIGTERM (a Ctrl-C reaches the whole process group: the coordinator closes the file first, with
the run's status) and ends when its pipe closes, so it never outlives the coordinator.
"""

from __future__ import annotations

import collections
import contextlib
import json
import multiprocessing.connection
import os
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.recorder.layout import (checkpoint_digest, open_file, space_error, store_streamed,
                                                   status_path, write_error, write_status)
from hybridsim.coordinator.recorder.pacing import NO_GRANT, Grant
from hybridsim.coordinator.recorder.shared import Board, attach_file
from hybridsim.coordinator.window import segments
from hybridsim.wire.contract import Record

WRITER_NICE = 10
"""niceness the writer process adds to its own (os.nice): on a machine with few cores the step loop and the
daemons win the CPU when they want it, the writer takes what is left (a block of 1024 rows costs it a few ms).
In a paced (real-time) run the writer goes further, to SCHED_IDLE: it runs only on a core nothing else wants"""


def serve(path: str, requests: Connection, replies: Connection, grants: Connection) -> None:
    """Write what the coordinator sends until it says close, or its pipe closes; in a paced run, a piece at a
    time within the coordinator's grants."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_IGN)  # the coordinator stops the run and closes the file
    os.nice(WRITER_NICE)
    inbox = _Inbox(requests)
    writer = _Writer(Path(path), _Gate(grants, inbox))
    try:
        while (request := inbox.take()) is not None:  # None: the coordinator has ended; what is flushed stays
            if request[0] == "close":
                writer.close(*request[1:])
                replies.send(("closed", writer.rows, writer.failure))
                return
            writer.handle(request)
            replies.send(("done", writer.rows, writer.failure))
    except BrokenPipeError:  # the coordinator has ended while the writer answered
        return
    finally:
        writer.release()


class _Inbox:
    """The coordinator's requests, received as soon as they come, also while a request waits for a grant: a
    request larger than the pipe's buffer (a checkpoint, a block of records) must never wait for the writer to
    finish the one before, which may wait for the loop's next sleep."""

    def __init__(self, requests: Connection) -> None:
        self.connection = requests
        self.ended = False
        """the coordinator has closed its end (it has ended)"""
        self._queue: collections.deque[tuple[Any, ...]] = collections.deque()

    def drain(self) -> None:
        """Receive every request that has come (never waits but for the rest of one being sent)."""
        try:
            while not self.ended and self.connection.poll():
                self._queue.append(self.connection.recv())
        except (EOFError, OSError):
            self.ended = True

    def take(self) -> tuple[Any, ...] | None:
        """The next request, waiting for it; None once the coordinator has ended and every request is taken."""
        if not self._queue and not self.ended:
            try:
                self._queue.append(self.connection.recv())
            except (EOFError, OSError):
                self.ended = True
        return self._queue.popleft() if self._queue else None


class _Gate:
    """When a paced writer may start its next piece of work: within the coordinator's latest :class:`Grant`
    (:meth:`Grant.may_start`), on the core the grant names.  Until the run is paced, and after the coordinator
    has ended (a pipe closed), always."""

    def __init__(self, grants: Connection, inbox: _Inbox) -> None:
        self.paced = False
        self._grants, self._inbox = grants, inbox
        self._grant = NO_GRANT
        self._ended = 0.0
        """when the last piece ended (wall time, s)"""
        self._cores = os.sched_getaffinity(0)
        self._core = -1
        """the core the writer keeps to (-1: any of ``_cores``)"""

    def wait(self, request: int) -> None:
        """Return when a piece of request number ``request`` may start."""
        while self.paced and not self._inbox.ended:
            try:
                while self._grants.poll():  # the newest grant holds
                    self._grant = Grant.unpack(self._grants.recv_bytes())
                    self._keep_to(self._grant.core)
            except (EOFError, OSError):  # the coordinator has ended: finish the request at hand
                break
            if self._grant.may_start(request, time.perf_counter(), self._ended):
                return
            if self._inbox.connection in multiprocessing.connection.wait([self._grants, self._inbox.connection]):
                self._inbox.drain()
        self.paced = False

    def ended(self, when: float) -> None:
        """A piece has ended at wall time ``when`` (s)."""
        self._ended = when

    def _keep_to(self, core: int) -> None:
        """Run on ``core`` from now on (-1: on any core the writer started with)."""
        if core != self._core:
            with contextlib.suppress(OSError):  # a core this process may not use
                os.sched_setaffinity(0, self._cores if core < 0 else {core})
                self._core = core


class _Writer:
    """The results file open for SWMR writing; rows come from the shared ring.  Each write is a series of pieces
    (:meth:`handle`), each started only when :class:`_Gate` allows."""

    def __init__(self, path: Path, gate: _Gate) -> None:
        self.path = path
        self._gate = gate
        self._requests = 0
        """requests received that write (the coordinator's numbers for them)"""
        self.rows = 0
        self.failure: str | None = None
        self._abandoned = False
        self._datasets: dict[str, h5py.Dataset] = {}
        """every dataset the writer touches, kept open until the file closes: closing one flushes its
        metadata, which must not happen in the middle of a failed write"""
        self._board = Board()
        self._ring: dict[str, np.ndarray] = {}
        self._file: h5py.File | None = None
        self._completed: h5py.h5a.AttrID | None = None
        """the file's attribute completed_steps, kept open: rewritten after every block"""
        try:
            self._file = open_file(path, "r+")
            self._descriptor = self._file.id.get_vfd_handle()
            """the file's descriptor, taken now: after a failed write HDF5 may not answer for it"""
            self.rows = int(self._file.attrs["completed_steps"])
            self._file.swmr_mode = True
            self._completed = h5py.h5a.open(self._file.id, b"completed_steps")  # (SWMR starts with none open)
        except Exception as exc:  # noqa: BLE001 - HDF5 reports errors as several types
            self.failure = write_error(path, exc)

    def handle(self, request: tuple[Any, ...]) -> None:
        """Do one request: attach the shared memory ("window"), or write rows, a checkpoint or records, a piece
        at a time (each one an interval on the activity board)."""
        kind, *arguments = request
        self._requests += 1
        if kind == "window":
            self._attach(*arguments)
            return
        work = {"rows": self._write_rows, "records": self._write_records,
                "checkpoint": self._write_checkpoint}[kind](*arguments)
        more = True
        while more and self.failure is None:
            self._gate.wait(self._requests)
            began = self._board.began()
            try:
                more = next(work, False) is None
            except Exception as exc:  # noqa: BLE001 - HDF5 reports write errors as several types
                self._abandon(exc)
            finally:
                self._gate.ended(self._board.ended(began))

    def _attach(self, name: str, layout: Sequence[tuple[str, tuple[int, ...], str]], paced: bool) -> None:
        """Map the shared memory; a paced writer runs at SCHED_IDLE (a waking step loop or daemon takes the CPU
        from it at once; a niced one ran on up to a slice)."""
        self._board.board, self._ring = attach_file(name, layout)
        if paced:
            self._gate.paced = True
            with contextlib.suppress(OSError):
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))

    # Each write is a generator: the work up to each ``yield`` is one piece.
    def _write_rows(self, stop: int) -> Iterator[None]:
        start = self.rows
        ring = self._ring
        if stop <= start or self._refuse(sum(values[0].nbytes for values in ring.values()) * (stop - start)):
            return
        for key, values in ring.items():
            dataset = self._dataset(key).id
            dataset.set_extent((stop,) + values.shape[1:])
            for row, slot, count in segments(start, stop, values.shape[0]):
                _write_at(dataset, row, values[slot:slot + count])
            yield
        self._file.flush()  # type: ignore[union-attr]
        yield
        self._completed.write(np.array(stop, dtype=np.int64))  # type: ignore[union-attr]
        self._file.flush()  # type: ignore[union-attr]
        self.rows = stop

    def _write_checkpoint(self, step: int, step_id: int, state: Mapping[str, np.ndarray],
                          modules: Mapping[str, bytes]) -> Iterator[None]:
        if self._refuse(2 * sum(len(blob) for blob in modules.values()) + 8 * sum(v.size for v in state.values())):
            return
        current = self._dataset("checkpoint/current")
        slot = "slot1" if current[0] == 0 else "slot0"
        stored = {}
        for key, value in state.items():
            dataset = self._dataset(f"checkpoint/{slot}/integrator/{key}")
            dataset[...] = stored[key] = np.asarray(value, dtype=dataset.dtype)  # the digest is of what is stored
        yield
        for name, blob in modules.items():
            dataset = self._dataset(f"checkpoint/{slot}/modules/{name}")
            dataset.resize(len(blob), axis=0)
            dataset[:] = np.frombuffer(blob, dtype=np.uint8)
            yield
        if f"checkpoint/{slot}/sha256" in self._file:  # (a file made before checkpoints had their SHA-256: none)
            self._dataset(f"checkpoint/{slot}/where")[...] = [step, step_id]
            self._dataset(f"checkpoint/{slot}/sha256")[...] = np.frombuffer(
                checkpoint_digest(step, step_id, stored, modules), dtype=np.uint8)
        self._file.flush()  # type: ignore[union-attr]
        yield
        current[...] = [int(slot[-1]), step, step_id]
        self._file.flush()  # type: ignore[union-attr]

    def _write_records(self, module: str, records: Sequence[Record]) -> Iterator[None]:
        if self._refuse(sum(8 * np.size(r.values) for r in records)):
            return
        for record in records:
            store_streamed(self._dataset(f"modules/{module}/records/{record.name}"), record)
            yield
        self._file.flush()  # type: ignore[union-attr]

    def _dataset(self, name: str) -> h5py.Dataset:
        if name not in self._datasets:
            self._datasets[name] = self._file[name]  # type: ignore[index]
        return self._datasets[name]

    def _refuse(self, needed: int) -> bool:
        """Stop writing (with the one-line failure) if the disk has no room for ``needed`` bytes and the reserve."""
        self.failure = space_error(self.path, needed)
        return self.failure is not None

    def _abandon(self, exc: BaseException) -> None:
        """A write failed: point the file's descriptor at /dev/null, record the line, release the file."""
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, self._descriptor)
        os.close(null)
        self._abandoned = True
        self.failure = write_error(self.path, exc)
        self.release()

    def close(self, status: str, summary: Mapping[str, Any] | None, stop: Mapping[str, Any] | None) -> None:
        """Record the run's status beside the file (its close space released first), then in it (unless the file
        was abandoned or never opened) and close the file; the side file goes once the file holds the status."""
        write_status(self.path, status, self.rows, summary, stop)
        if self._file is None or self._abandoned or not self._file.id.valid:
            return
        try:
            self._file.attrs["status"] = status
            if summary is not None:
                self._file.attrs["summary"] = json.dumps(summary)
            if stop is not None:
                self._file.attrs["stop"] = json.dumps(stop)
            self._file.close()
        except Exception as exc:  # noqa: BLE001 - HDF5 reports write errors as several types
            self._abandon(exc)
            return
        status_path(self.path).unlink(missing_ok=True)  # the file says it itself now

    def release(self) -> None:
        """Close the file as it stands (an abandoned one writes nothing: its descriptor is /dev/null)."""
        if self._file is not None:
            with contextlib.suppress(Exception):
                self._file.close()
            self._file = None


def _write_at(dataset: h5py.h5d.DatasetID, row: int, values: np.ndarray) -> None:
    """Write ``values`` (C-contiguous rows) into ``dataset`` from ``row`` on, through HDF5's own calls: h5py's
    indexing costs two to three times more per call, most of a paced writer's piece."""
    space = dataset.get_space()
    space.select_hyperslab((row,) + (0,) * (values.ndim - 1), values.shape)
    dataset.write(h5py.h5s.create_simple(values.shape), space, values)
