"""A run that a site daemon stops in the middle of a block of rows keeps exactly every completed step.

Two local daemons (a spring and an experimental site with a virtual lab) carry a two-storey shear
building; the site's load cells have a limit, and the site refuses the step (at execute, as the
bridge study's lagging actuators did) whose measured load passes it.  The unstopped run (modules in
process, the same numbers bit for bit) says where: the first row whose load-cell force is beyond the
limit.  The stopped run's file must hold every row before it, equal to the unstopped run's, and not
one row more, although the refusal comes between two of the results writer's blocks (every 1024
rows) and after a checkpoint.

(The bridge study's "stopped at step 916, 897 rows" was this case read differently: the site named
its wire step 916, which counts the pre-test's steps; the refused row was 897, t = 8.97 s, and the
file held rows 0 .. 896.)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.run_loop import RECORD_BLOCK
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import MARTHS_DATA

DT = 0.005


def experiment(output: Path, where: dict[str, str], limit: float | None = None) -> Any:
    """The two-storey building of examples/setups/none.toml: storey 1 a spring module, storey 2 a site."""
    actuator = {} if limit is None else {"force": limit}
    plant = {"dt": DT, "dofs": ["floor1", "floor2"], "actuators": [{"model": "ideal"}, {"model": "ideal"}],
             "load_cells": {"sigma": 10.0, "seed": 4, "shared": False},
             "specimen": {"kind": "spring", "law": "bilinear", "stiffness": 5.0e5, "yield_displacement": 0.01,
                          "hardening_ratio": 0.05}}
    return parse_experiment({
        "experiment": {"name": "refused", "dt": DT, "duration": 10.0},
        "structure": {"dofs": ["x1", "x2"], "mass_diagonal": [2000.0, 2000.0], "influence": [1.0, 1.0],
                      "damping": {"rayleigh": [0.5, 0.0]}},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 0.8},
        "integrator": {"kind": "alpha-os", "alpha": -0.05},
        "modules": [{"name": "first", "kind": "spring", **where,
                     "config": {"dofs": ["x1"], "law": "linear", "stiffness": 8.0e5}},
                    {"name": "second", "kind": "experimental", **where,
                     "config": {"dt": DT, "setup": {"kind": "none", "dofs": ["x1", "x2"]},
                                "actuators": [actuator, actuator], "backend": {"plant": plant}}}],
        "output": {"file": str(output), "checkpoint_every": 512},
    }, base_dir=output.parent)


def test_a_site_daemon_refusing_a_step_mid_block_leaves_exactly_the_completed_steps(tmp_path):
    run_experiment(experiment(tmp_path / "full.h5", {}))
    full = read_results(tmp_path / "full.h5")
    loads = np.abs(full["modules/second/force"]).max(axis=1)  # setup none: the DOF forces are the load cells
    limit = float(loads[:1200].max()) * (1 + 1e-9)
    refused = int(np.argmax(loads > limit))  # the first row whose measured load passes the limit
    assert RECORD_BLOCK < refused < 2 * RECORD_BLOCK and refused % 512 != 0  # between blocks, after a checkpoint

    with pytest.raises(RunStopped) as stop:
        run_experiment(experiment(tmp_path / "stopped.h5", {"address": "local"}, limit))
    message = str(stop.value)
    assert re.search(rf"module 'second' \(local daemon at 127\.0\.0\.1:\d+\) at step {refused} "
                     rf"\(t = {refused * DT:.6g} s\): .*load cell reads", message)

    stored = read_results(tmp_path / "stopped.h5")
    attrs = stored["attrs"]
    assert attrs["completed_steps"] == refused and stored["time"].shape == (refused,)
    assert attrs["status"].startswith("stopped: module 'second'")
    assert '"step": %d' % refused in attrs["stop"]
    np.testing.assert_allclose(stored["time"], DT * np.arange(refused), rtol=0, atol=1e-12)
    assert np.all(np.diff(stored["step_id"]) > 0)
    for key in ("displacement", "velocity", "acceleration", "restoring_force", "modules/first/force",
                "modules/second/displacement", "modules/second/force"):
        np.testing.assert_array_equal(stored[key], full[key][:refused], err_msg=key)  # the same steps, no other
