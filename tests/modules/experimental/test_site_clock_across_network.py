"""A site on its own clock across an emulated network that loses packets (hybridsim.wire.network): a lost packet
is resent late by TCP, the target reaches the site late, the clock slows and holds, and the command never jumps.

The oracles are those of tests/modules/experimental/test_site_clock.py (the predictor's error bound A w^3 Dt^3 of a
sine target, a held sample repeating its command, each step ending on its target), not the clock's code."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from hybridsim.modules.experimental.clock import HELD
from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.network import Network
from hybridsim.wire.remote import RemoteModule
from tests.modules.experimental.test_site_clock import AMPLITUDE, DT, K, OMEGA, drive, sine, site_config


def test_a_lost_packet_and_a_late_reply_make_the_clock_hold_never_jump(tmp_path: Path) -> None:
    """Dt = 40 samples across 20 ms ± 2 ms losing 15 % of the segments (resent 60 ms later, doubling): the targets
    of steps whose request or reply was lost arrive past the hold share, the clock holds; every command stays
    within the predictor's error bound of the sine, a held sample repeats the command, each step ends on its
    target."""
    m, steps = 40, 30
    step_dt = m * DT
    config = site_config(clock="own", command_generation={"scheme": "predictor-corrector", "order": 2})
    network = Network(0.020, 0.002, loss=0.15, retransmit_s=0.06, seed=3)
    with LocalDaemon("experimental", {**config, "record": "site.h5"}, base_dir=tmp_path, name="far-site") as daemon:
        module = RemoteModule(daemon.address, name="far-site", deadline_s=30.0, network=network)
        try:
            results = drive(module, step_dt, steps)
            stats = module.close()
        finally:
            module.disconnect()
    with h5py.File(tmp_path / "site.h5") as f:
        commands, samples = f["commands"][()], f["clock/samples"][()]
    assert stats["network_lost_segments"] >= 1 and stats["network_max_resend_wait_s"] >= 0.06
    assert stats["clock_steps"] == steps and stats["clock_held_samples"] > 0
    bound_mm = 1e3 * AMPLITUDE * OMEGA ** 3 * step_dt ** 3
    commands = commands[: samples.shape[0], 0]  # row k: the command of sample k + 1
    smooth = samples[:, 1] >= 3 * step_dt
    assert np.max(np.abs(commands - 1e3 * sine(samples[:, 1]))[smooth]) <= 1.02 * bound_mm
    assert np.max(np.abs(np.diff(commands))[smooth[1:]]) <= 1e3 * AMPLITUDE * OMEGA * DT + 2.04 * bound_mm
    held = samples[:, 2] == HELD
    assert np.all(np.diff(commands)[held[1:]] == 0.0)
    for n, result in enumerate(results[1:], start=1):
        assert result.displacement[0] == pytest.approx(sine(n * step_dt), abs=1e-15)
        assert result.force[0] == pytest.approx(K * sine(n * step_dt), rel=1e-12, abs=1e-9)
