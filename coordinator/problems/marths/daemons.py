"""The benchmark with its sites as local daemons: `plant` <- `experimental` <- the benchmark loop.

Two `hybridsim site` daemons on 127.0.0.1: the plant (the virtual lab), and
the experimental site, whose backend is that plant daemon.  The benchmark
loop drives the site through :class:`~hybridsim.wire.remote.RemoteModule`, one
control sample per step; the site writes its record (measured strokes,
commands) at close, which the loop reads back for J1..J4.  Same seeds, same
configs as in process, so the criteria are the same.

``clock = True``: the site runs on its own clock (``clock = "own"``, the plant in its process as a lab's
controller has it, SCHED_FIFO where permitted): its control loop ticks at 1024 Hz on the wall clock
and each target must reach it within the sample before the one it drives, or that sample holds.  Its
record then has a row per control sample, held ones included; the criteria take the samples that
ended the steps (what the loop saw), :func:`~hybridsim.modules.experimental.clock.step_rows`.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path

import h5py

from hybridsim.wire.daemons import LocalDaemon
from hybridsim.coordinator.problems.marths import loop, parts
from hybridsim.modules.experimental.clock import realtime_thread, step_rows
from hybridsim.wire.network import Network
from hybridsim.wire.remote import RemoteModule
from hybridsim.wire.contract import Session


CLOCK = {"clock": "own", "scheduling": {"priority": 80, "spin_us": 50.0}}
"""the site's clock keys of ``run_on_daemons(clock=True)``"""
LOOP_PRIORITY = 70
"""SCHED_FIFO priority of the loop (the coordinator) with the site on its own clock, where permitted"""


def run_on_daemons(spec: loop.RunSpec, deadline_s: float = 30.0, transport: str = "link",
                   timings: dict[str, float] | None = None, clock: bool = False,
                   network: Network | None = None) -> loop.History:
    """One run with the plant and the experimental site each in its own daemon.

    ``transport`` = "link": every control sample crosses both hops (loop -> site, site -> plant) on the
    daemons' step links (hybridsim.wire.channels.link); "stream": on their gRPC Steps streams.  ``timings``, if
    given, receives the wall times (s) of starting the daemons and opening the session ("start_s"), of
    the loop ("loop_s") and of closing and stopping ("stop_s").  ``network``: an emulated path between the loop
    and the site (hybridsim.wire.network; the link then goes over TCP through it).
    """
    if transport not in ("link", "stream"):
        raise ValueError(f"transport must be 'link' or 'stream', not {transport!r}")
    if clock and spec.iterative:
        raise ValueError("an ideal plant is solved by iterating each tick: a site on its own clock cannot take a "
                         "sample back; use plant ideal-delay")
    timings = {} if timings is None else timings
    begin = time.perf_counter()
    plant_config = parts.plant_config(spec.plant, spec.plant_seed, spec.noise, spec.noise_seed,
                                      spec.shared_noise, spec.daq_in_loop, spec.plant_gain)
    with tempfile.TemporaryDirectory(prefix="hybridsim-marths-") as folder, contextlib.ExitStack() as stack:
        record_path = Path(folder) / "site_record.h5"
        backend: dict[str, object] = {"plant": plant_config}
        plant = None
        if not clock:
            plant = stack.enter_context(LocalDaemon("plant", plant_config, name="marths-plant"))
            backend = {"address": plant.address, "deadline_s": deadline_s, "transport": transport}
        site_config = {**loop.site_config(spec, backend=backend, record=record_path.name), **(CLOCK if clock else {})}
        with LocalDaemon("experimental", site_config, base_dir=Path(folder), name="marths-site") as site:
            module = RemoteModule(site.address, name="marths-site", deadline_s=deadline_s, transport=transport,
                                  network=network)
            try:
                module.open(Session(parts.DT, parts.SITE_DOFS, run_id="marths"))
                looping = time.perf_counter()
                with realtime_thread(LOOP_PRIORITY if clock else 0):
                    logs = loop.simulate(spec, loop.ModuleSide(module, parts.DT))
                stopping = time.perf_counter()
                stats = module.close()  # the site writes its record
            finally:
                module.disconnect()
                site.terminate()  # both daemons stop at once
                if plant is not None:
                    plant.terminate()
        stack.close()
        timings.update(start_s=looping - begin, loop_s=stopping - looping, stop_s=time.perf_counter() - stopping)
        with h5py.File(record_path) as f:
            record = {name: f[name][()] for name in ("measured_strokes", "commands")}
            if "clock" in f:
                record = step_rows(record, f["clock/steps"][()])
    history = loop.history(spec, logs, record)
    history.info["site"] = {k: v for k, v in stats.items() if k.startswith("clock_")}
    return history
