"""A real-time run's results writer works only in the loop's sleep: a piece at a time, started only within a
grant of the coordinator, on the requests that grant covers; a loop that waits for it, or is held, lets it run
freely; nothing the loop sends or grants can make either side wait for the other without end.  A real writer
process over a real file."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import numpy as np

from hybridsim.coordinator.recorder import DEFERRED_ROWS, Recorder, read_checkpoint, read_results
from hybridsim.coordinator.window import RowWindow, results_columns

MODULES = {"spring": 1}
ROWS = 600
STATE = {"displacement": np.zeros(1)}


def _paced(tmp_path, capacity: int = 1024) -> tuple[Recorder, RowWindow]:
    columns = results_columns(1, MODULES)
    window = RowWindow(columns, MODULES, capacity)
    recorder = Recorder(tmp_path / "paced.h5", columns, dofs=["x"], checkpoint_state=STATE,
                        checkpoint_modules=list(MODULES))
    recorder.start(window, paced=True)
    return recorder, window


def _fill(window: RowWindow, start: int, stop: int) -> None:
    """Rows whose every value says where it belongs: row + column / 10 + dataset number / 100."""
    for number, (_key, values) in enumerate(window.arrays.items()):
        for row in range(start, stop):
            values[window.slot(row)] = row + (np.arange(values.shape[1]) / 10 if values.ndim == 2 else 0) + number / 100
    window.rows = stop


def _replies(recorder: Recorder, seconds: float = 0.3) -> None:
    """Take the writer's replies for a while, granting nothing (``wait_written(0)`` is done at once)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        recorder.wait_written(0)
        time.sleep(0.01)


def _writer(recorder: Recorder) -> int:
    """The PID of ``recorder``'s writer process."""
    (writer,) = [p.pid for p in multiprocessing.active_children() if p.name == f"results writer {recorder.path.name}"]
    return writer


def _stored_equal(recorder: Recorder, window: RowWindow, rows: int) -> None:
    stored = read_results(recorder.path)
    assert stored["attrs"]["completed_steps"] == rows
    for key, values in window.arrays.items():
        np.testing.assert_array_equal(stored[key], values[:rows])


def test_a_paced_writer_starts_every_piece_within_a_grant_and_writes_nothing_without_one(tmp_path):
    recorder, window = _paced(tmp_path)
    _fill(window, 0, ROWS)
    recorder.submit(ROWS)
    recorder.collect(time.perf_counter())  # the rows are sent, with a grant that has ended already
    _replies(recorder)
    assert recorder.rows == 0 and recorder.activity.count == 0

    grants, deadline = [], time.perf_counter() + 30  # grants of 4 ms with 4 ms between them, until written
    while recorder.rows < ROWS:
        assert time.perf_counter() < deadline, f"{recorder.rows} of {ROWS} rows written in 30 s of grants"
        now = time.perf_counter()
        recorder.collect(now + 4e-3)
        grants.append((now, now + 4e-3))
        time.sleep(8e-3)
    recorder.activity.sync()
    pieces = list(recorder.activity.spans)
    assert len(pieces) == len(window.columns) + 2  # a dataset each, the data's flush, the row count's
    for began, _ended in pieces:  # each piece began in a grant (1 ms allowed from the gate to the piece's start)
        assert any(start <= began < until + 1e-3 for start, until in grants), (began, grants[-3:])
    writer = _writer(recorder)
    assert len(os.sched_getaffinity(writer)) == 1 <= len(os.sched_getaffinity(0))  # kept to the loop's core

    _fill(window, ROWS, ROWS + 1)
    recorder.submit(ROWS + 1)
    recorder.wait_written(ROWS + 1)  # a loop that waits lets its writer run on any of its cores
    assert os.sched_getaffinity(writer) == os.sched_getaffinity(0)
    recorder.close("completed")
    _stored_equal(recorder, window, ROWS + 1)


def test_a_grant_covers_only_the_requests_sent_before_it(tmp_path):
    recorder, window = _paced(tmp_path)
    _fill(window, 0, 300)
    recorder.submit(300)
    recorder.collect(time.perf_counter() + 60)  # a grant of a minute: the first rows are written in it
    deadline = time.perf_counter() + 30
    while recorder.rows < 300:
        assert time.perf_counter() < deadline
        _replies(recorder, 0.01)
    _fill(window, 300, ROWS)
    recorder.checkpoint(ROWS - 1, ROWS - 1, STATE, {"spring": b"state"})  # rows and a checkpoint, no new grant
    _replies(recorder)  # the minute's grant still runs, but covers neither
    assert recorder.rows == 300 and read_checkpoint(recorder.path) is None

    recorder.wait_written(ROWS)  # a loop that waits for its writer lets it do everything sent
    assert recorder.rows == ROWS
    recorder.close("completed")
    _stored_equal(recorder, window, ROWS)
    assert read_checkpoint(recorder.path).step == ROWS - 1


def test_a_request_larger_than_the_pipe_is_taken_while_the_writer_waits_for_a_grant(tmp_path):
    recorder, window = _paced(tmp_path)
    _fill(window, 0, ROWS)
    recorder.submit(ROWS)
    recorder.collect(time.perf_counter())  # the rows wait for a grant at the writer
    blob = bytes(range(256)) * 800  # 200 KB: three times a pipe's buffer
    sender = threading.Thread(target=recorder.checkpoint, args=(ROWS - 1, ROWS - 1, STATE, {"spring": blob}))
    sender.start()
    sender.join(10)
    assert not sender.is_alive(), "the coordinator waited for a writer that waited for a grant"
    recorder.close("completed")
    assert read_checkpoint(recorder.path).modules["spring"] == blob
    _stored_equal(recorder, window, ROWS)


def test_a_writer_that_reads_no_grants_never_makes_the_loop_wait(tmp_path):
    recorder, window = _paced(tmp_path)
    _fill(window, 0, ROWS)
    recorder.submit(ROWS)
    writer = _writer(recorder)
    os.kill(writer, signal.SIGSTOP)  # a piece that lasts (a disk that stalls a flush)
    try:
        began = time.perf_counter()
        for _ in range(20000):  # 20 s of sleeps at 1024 Hz, a grant each: far more than the pipe holds
            recorder.collect(time.perf_counter() + 1e-3)
        assert time.perf_counter() - began < 10
    finally:
        os.kill(writer, signal.SIGCONT)
    recorder.wait_written(ROWS)
    recorder.close("completed")
    _stored_equal(recorder, window, ROWS)


def test_a_held_run_lets_its_writer_write_what_it_was_sent(tmp_path):
    recorder, window = _paced(tmp_path)
    _fill(window, 0, ROWS)
    recorder.submit(ROWS)
    recorder.let_write()  # the loop is held: no sleeps, no grants, for as long as the hold lasts
    deadline = time.perf_counter() + 30
    while recorder.rows < ROWS:
        assert time.perf_counter() < deadline
        _replies(recorder, 0.01)
    assert recorder.counts()["loop_writer_waits"] == 0
    recorder.close("completed")
    _stored_equal(recorder, window, ROWS)


def test_a_writer_that_the_loop_never_lets_work_writes_beside_it_once_it_is_deferred_rows_behind(tmp_path):
    recorder, window = _paced(tmp_path, capacity=2 * DEFERRED_ROWS)
    _fill(window, 0, DEFERRED_ROWS - 1)
    for rows in range(1024, DEFERRED_ROWS, 1024):  # a loop that never sleeps IDLE_S: no collect, no grant
        recorder.submit(rows)
    _replies(recorder)
    assert recorder.rows == 0 and recorder.counts() == {"loop_writer_waits": 0, "writer_hurried": 0,
                                                        "writer_behind": 0}
    _fill(window, DEFERRED_ROWS - 1, DEFERRED_ROWS + 10)
    recorder.submit(DEFERRED_ROWS + 10)  # now DEFERRED_ROWS behind: sent, and let write beside the loop
    deadline = time.perf_counter() + 30
    while recorder.rows < DEFERRED_ROWS + 10:
        assert time.perf_counter() < deadline, recorder.rows
        _replies(recorder, 0.01)
    assert recorder.counts() == {"loop_writer_waits": 0, "writer_hurried": 1, "writer_behind": 1}
    recorder.close("completed")
    _stored_equal(recorder, window, DEFERRED_ROWS + 10)
