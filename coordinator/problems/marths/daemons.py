"""The benchmark with its sites as local daemons: `plant` <- `experimental` <- the benchmark loop.

Two `hybridsim site` daemons on 127.0.0.1: the plant (the virtual lab), and
the experimental site, whose backend is that plant daemon.  The benchmark
loop drives the site through :class:`~hybridsim.wire.remote.RemoteModule`, one
control sample per step; the site writes its record (measured strokes,
commands) at close, which the loop reads back for J1..J4.  Same seeds, same
configs as in process, so the criteria are the same.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import h5py

from hybridsim.wire.daemons import LocalDaemon
from hybridsim.coordinator.problems.marths import loop, parts
from hybridsim.wire.remote import RemoteModule
from hybridsim.wire.contract import Session


def run_on_daemons(spec: loop.RunSpec, deadline_s: float = 30.0, transport: str = "link",
                   timings: dict[str, float] | None = None) -> loop.History:
    """One run with the plant and the experimental site each in its own daemon.

    ``transport`` = "link": every control sample crosses both hops (loop -> site, site -> plant) on the
    daemons' step links (hybridsim.wire.channels.link); "stream": on their gRPC Steps streams.  ``timings``, if
    given, receives the wall times (s) of starting the daemons and opening the session ("start_s"), of
    the loop ("loop_s") and of closing and stopping ("stop_s").
    """
    if transport not in ("link", "stream"):
        raise ValueError(f"transport must be 'link' or 'stream', not {transport!r}")
    timings = {} if timings is None else timings
    begin = time.perf_counter()
    plant_config = parts.plant_config(spec.plant, spec.plant_seed, spec.noise, spec.noise_seed,
                                             spec.shared_noise, spec.daq_in_loop)
    with tempfile.TemporaryDirectory(prefix="hybridsim-marths-") as folder:
        record_path = Path(folder) / "site_record.h5"
        with LocalDaemon("plant", plant_config, name="marths-plant") as plant:
            backend = {"address": plant.address, "deadline_s": deadline_s, "transport": transport}
            site_config = loop.site_config(spec, backend=backend, record=record_path.name)
            with LocalDaemon("experimental", site_config, base_dir=Path(folder), name="marths-site") as site:
                module = RemoteModule(site.address, name="marths-site", deadline_s=deadline_s,
                                      transport=transport)
                try:
                    module.open(Session(parts.DT, parts.SITE_DOFS, run_id="marths"))
                    looping = time.perf_counter()
                    logs = loop.simulate(spec, loop.ModuleSide(module, parts.DT))
                    stopping = time.perf_counter()
                    module.close()  # the site writes its record
                finally:
                    module.disconnect()
                    site.terminate()  # both daemons stop at once
                    plant.terminate()
        timings.update(start_s=looping - begin, loop_s=stopping - looping, stop_s=time.perf_counter() - stopping)
        with h5py.File(record_path) as f:
            record = {name: f[name][()] for name in ("measured_strokes", "commands")}
    return loop.history(spec, logs, record)
