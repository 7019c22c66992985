"""RowLog: a streamed log holds two collections and, once grown to them, allocates nothing more."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.modules.rowlog import RowLog


def test_collections_every_256_rows_keep_one_array_of_512_rows_and_every_row_once() -> None:
    """Rows r = (r, -r) appended one at a time; a collection every 256 rows takes the rows from the previous
    collection's end on and forgets the ones before the previous collection (the caller confirmed them
    stored): between two collections the log holds at most 2 x 256 rows, so a 512-row array (1024 by
    default: it never needs to grow) serves the whole run, and the collected rows are every row, once."""
    log = RowLog(2)
    array = log.values
    collected, since, stored = [], 0, 0
    for r in range(100_000):
        log.append(r, -r)
        if (r + 1) % 256 == 0:
            log.forget(stored)
            block = log.head(start=since)
            collected.append(block)
            stored, since = since, log.rows
            assert log.held <= 512
    assert log.values is array and array.shape == (1024, 2)
    rows = np.concatenate(collected)
    np.testing.assert_array_equal(rows[:, 0], np.arange(rows.shape[0]))
    np.testing.assert_array_equal(rows[:, 1], -rows[:, 0])
    assert rows.shape[0] == 100_000 - 100_000 % 256


def test_rows_written_out_of_order_truncated_and_restarted() -> None:
    log = RowLog(1, capacity=2)
    log.at(4)[:] = 4.0  # rows 0..3 unwritten: NaN; the array grew to hold row 4
    assert log.rows == 5 and np.isnan(log.head()[:4]).all() and log.head(5, 4)[0, 0] == 4.0
    log.truncate(2)
    assert log.rows == 2 and np.isnan(log.values[:5]).all()
    log.forget(7)  # rows not written yet go too: the next row is 7
    assert log.first == 7 and log.held == 0
    with pytest.raises(ValueError, match="rows before 7 were stored and forgotten, not 6"):
        log.at(6)
    log.append(7.0)
    log.append(8.0)
    log.forget(9, keep=1)
    assert log.last()[0] == 8.0 and log.first == 8 and log.held == 1
    log.restart(20)
    assert (log.first, log.held, log.rows) == (20, 0, 20)
