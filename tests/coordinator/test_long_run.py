"""Long studies (pytest -m long; skipped by default and in CI): a step costs the same at the end of a
long run as at its start, in time and in memory.

A 1-DOF yielding spring under Newmark implicit (every step iterated), El Centro at 0.6 repeated 120
times at dt = 0.01 s: 494,160 steps.  It must not stop on convergence (issue 17: it did at a moment of
rest), run the last tenth within 10 % of the first tenth's steps/s (the same phase of the record),
and grow the coordinator's memory by less than 1 MB per 100,000 steps over the second half.
"""

from __future__ import annotations

import pytest

from hybridsim.coordinator.bench_longrun import long_run


@pytest.mark.long
def test_half_a_million_newmark_steps_of_a_yielding_spring_at_constant_cost():
    run = long_run("newmark", "spring", daemon=False, seconds=41.18, repeats=120)
    assert run["steps"] > 490_000
    assert run["steps_per_s"]["last_over_first"] > 0.9, run["steps_per_s"]
    assert run["rss_growth_mb_per_100k_steps"]["coordinator"] < 1.0, run["rss_mb"]
    assert run["checkpoint_bytes"]["90%"] == run["checkpoint_bytes"]["100%"]
