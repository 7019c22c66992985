"""`hybridsim bench`'s large_model: the generated frame against OpenSees, the bench's step against OpenSees'
AlphaOS, and the bench entry at a tiny size (the sizes of the issue are `hybridsim bench`'s; the 60 s
real-time run is benchmarks/large_model_realtime.py, long marker below)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

from hybridsim.coordinator.bench_large import coordinator, in_child, large_model, step_times
from hybridsim.coordinator.large_frame import DT, RAYLEIGH, SCHEMES, ground
from hybridsim.modules.opensees.models.frame2d import Frame, build, matrices, opensees_response

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "large_model_realtime.py"


def test_the_frames_first_period_is_opensees_eigen_of_the_same_mesh():
    from hybridsim.modules.opensees import domain
    from hybridsim.modules.opensees.lazy import ops

    frame = Frame(3, 4)
    stiffness, mass = matrices(frame)
    ours = 2 * np.pi / np.sqrt(scipy.linalg.eigh(stiffness.toarray(), mass.toarray(), eigvals_only=True)[0])
    with domain.held("first period of a 3 x 4 frame"):
        ops.wipe()
        build(ops, 3, 4)
        opensees = 2 * np.pi / np.sqrt(ops.eigen("-fullGenLapack", 1)[0])
        ops.wipe()
    print(f"3 x 4 frame: T1 {ours:.6f} s, OpenSees {opensees:.6f} s")
    assert 0.05 < ours < 5.0
    assert abs(ours - opensees) / opensees < 1e-9


def test_the_benchs_step_is_opensees_alphaos_on_the_same_frame():
    frame, steps = Frame(3, 4), 300
    built = coordinator(frame, "alpha-os")
    times, late = step_times(built, ground(steps + 1), 1, steps, 60.0, paced=False)
    _, integrator, algorithm = SCHEMES["alpha-os"]
    reference = opensees_response(frame, integrator, ground(steps + 1), DT, RAYLEIGH, range(frame.ndof),
                                  algorithm=algorithm)[-1]
    built[0].close()
    assert times.size == steps and late == 0
    peak = np.max(np.abs(reference))
    difference = np.max(np.abs(built[1].displacement - reference)) / peak
    print(f"the bench's alpha-OS step vs OpenSees AlphaOS after {steps} steps: {difference:.1e} of {peak:.4f} m")
    assert peak > 1e-3
    assert difference < 1e-9


def test_the_bench_entry_runs_at_a_tiny_size_and_says_what_it_cannot_build():
    figures = large_model(sizes=((3, 4),), crossover=((2, 3),), steps=64, budget_s=1.0, timeout_s=120.0)
    rows = figures["table"]
    assert [(r["ndof"], r["scheme"]) for r in rows] == [(36, "alpha-os"), (36, "kr-alpha")]  # 3 DOFs x 3 x 4 joints
    assert all(r["steps"] == 64 and 0 < r["mean_us"] <= r["p99_us"] for r in rows)
    dense, sparse = figures["crossover"]["pairs"][0]
    assert (dense["ndof"], dense["sparse"], sparse["sparse"]) == (18, False, True)
    late = in_child({"lines": 183, "stories": 182, "scheme": "alpha-os"}, timeout_s=0.5)
    assert late["error"] == "183 x 182 frame: not done within 0.5 s"


@pytest.mark.long
def test_a_realtime_run_of_the_large_frame_for_60_s(tmp_path):
    done = subprocess.run([sys.executable, str(BENCHMARK), "--seconds", "60", "--folder", str(tmp_path), "--json"],
                          capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout)
    print(figures)
    assert figures["ndof"] == 1026 and figures["steps"] == 60 * 1024 + 1
