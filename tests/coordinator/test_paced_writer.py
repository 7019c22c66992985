"""A real-time run's results writer works only in the loop's sleep: a piece at a time, started only within a
grant of the coordinator, on the requests that grant covers; a loop that waits for it lets it run freely.
A real writer process over a real file."""

from __future__ import annotations

import multiprocessing
import os
import time

import numpy as np

from hybridsim.coordinator.recorder import DEFERRED_ROWS, Recorder, read_results
from hybridsim.coordinator.window import RowWindow, results_columns

MODULES = {"spring": 1}
ROWS = 600


def _paced(tmp_path, capacity: int = 1024) -> tuple[Recorder, RowWindow]:
    columns = results_columns(1, MODULES)
    window = RowWindow(columns, MODULES, capacity)
    recorder = Recorder(tmp_path / "paced.h5", columns, dofs=["x"])
    recorder.start(window, paced=True)
    return recorder, window


def _fill(window: RowWindow, start: int, stop: int) -> None:
    """Rows whose every value says where it belongs: row + column / 10 + dataset number / 100."""
    for number, (key, values) in enumerate(window.arrays.items()):
        for row in range(start, stop):
            values[window.slot(row)] = row + (np.arange(values.shape[1]) / 10 if values.ndim == 2 else 0) + number / 100
    window.rows = stop


def _settle(recorder: Recorder, seconds: float = 0.3, grant: bool = True) -> None:
    """Let a writer that is not allowed to work show that it does not, taking its replies (and, with ``grant``,
    giving it grants that have ended already)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        if grant:
            recorder.collect(time.perf_counter())
        else:
            recorder.wait_written(0)  # takes the replies
        time.sleep(0.01)


def _writer(recorder: Recorder) -> int:
    """The PID of ``recorder``'s writer process."""
    (writer,) = [p.pid for p in multiprocessing.active_children() if p.name == f"results writer {recorder.path.name}"]
    return writer


def _grant_until_written(recorder: Recorder, rows: int, sleep_s: float = 2e-3) -> list[tuple[float, float]]:
    """Sleeps of ``sleep_s`` as a paced loop has them, each a grant, until ``rows`` rows are on disk."""
    grants = []
    deadline = time.perf_counter() + 30
    while recorder.rows < rows:
        assert time.perf_counter() < deadline, f"{recorder.rows} of {rows} rows written in 30 s of grants"
        now = time.perf_counter()
        recorder.collect(now + sleep_s)
        grants.append((now, now + sleep_s))
        time.sleep(sleep_s)
    return grants


def test_a_paced_writer_starts_every_piece_within_a_grant_and_writes_nothing_without_one(tmp_path):
    recorder, window = _paced(tmp_path)
    _fill(window, 0, ROWS)
    recorder.submit(ROWS)
    _settle(recorder)  # the rows are sent, but no grant leaves PIECE_S
    assert recorder.rows == 0 and recorder.activity.count == 0

    grants = _grant_until_written(recorder, ROWS)
    recorder.activity.sync()
    pieces = list(recorder.activity.spans)
    assert len(pieces) == len(window.columns) + 2  # a dataset each, the data's flush, the row count's
    for began, _ended in pieces:  # each piece began in a grant
        assert any(start <= began < until for start, until in grants), (began, grants[-3:])
    writer = _writer(recorder)
    assert len(os.sched_getaffinity(writer)) == 1 <= len(os.sched_getaffinity(0))  # kept on the loop's core
    recorder.wait_written(ROWS)
    _fill(window, ROWS, ROWS + 1)
    recorder.submit(ROWS + 1)
    recorder.wait_written(ROWS + 1)  # a loop that waits lets its writer run on any of its cores
    assert os.sched_getaffinity(writer) == os.sched_getaffinity(0)

    recorder.close("completed")
    stored = read_results(recorder.path)
    assert stored["attrs"]["completed_steps"] == ROWS + 1
    for key, values in window.arrays.items():
        np.testing.assert_array_equal(stored[key], values[:ROWS + 1])


def test_a_grant_covers_only_the_requests_sent_before_it(tmp_path):
    recorder, window = _paced(tmp_path)
    _fill(window, 0, 300)
    recorder.submit(300)
    recorder.collect(time.perf_counter() + 60)  # a long grant: the first rows are written in it
    deadline = time.perf_counter() + 30
    while recorder.rows < 300:
        assert time.perf_counter() < deadline
        time.sleep(0.01)
        recorder.collect(time.perf_counter())
    _fill(window, 300, ROWS)
    recorder.submit(ROWS)
    _settle(recorder)  # sent after the long grant, which still lasts: not covered by it
    assert recorder.rows == 300

    recorder.wait_written(ROWS)  # a loop that waits for its writer lets it do everything sent
    assert recorder.rows == ROWS
    recorder.close("completed")
    stored = read_results(recorder.path)
    np.testing.assert_array_equal(stored["displacement"], window.arrays["displacement"][:ROWS])



def test_a_writer_that_the_loop_never_lets_work_writes_beside_it_once_it_is_deferred_rows_behind(tmp_path):
    recorder, window = _paced(tmp_path, capacity=2 * DEFERRED_ROWS)
    _fill(window, 0, DEFERRED_ROWS - 1)
    recorder.submit(DEFERRED_ROWS - 1)  # a loop that never sleeps IDLE_S: no collect, no grant
    _settle(recorder, grant=False)
    assert recorder.rows == 0 and recorder.counts() == {"loop_writer_waits": 0, "writer_behind": 0}
    _fill(window, DEFERRED_ROWS - 1, DEFERRED_ROWS + 10)
    recorder.submit(DEFERRED_ROWS + 10)  # now DEFERRED_ROWS behind: sent, and let write beside the loop
    deadline = time.perf_counter() + 30
    while recorder.rows < DEFERRED_ROWS + 10:
        assert time.perf_counter() < deadline, recorder.rows
        _settle(recorder, 0.01, grant=False)
    assert recorder.counts() == {"loop_writer_waits": 0, "writer_behind": 1}
    recorder.close("completed")
    np.testing.assert_array_equal(read_results(recorder.path)["velocity"], window.arrays["velocity"][:DEFERRED_ROWS + 10])
