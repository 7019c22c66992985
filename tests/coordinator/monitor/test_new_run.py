"""A `hybridsim monitor` left open between runs notices the next run on the same address within 2 s.

Two real coordinators' Monitor services, one after the other on one loopback port, with a pause between them
long enough that gRPC's default reconnect backoff (1 s growing by 1.6 to 2 minutes) would have kept the page
on the first run for many seconds.
"""

from __future__ import annotations

import dataclasses
import io
import socket
import threading
import time

from hybridsim.coordinator.monitor.session import monitoring
from hybridsim.coordinator.monitor.web import MonitorWebServer
from hybridsim.coordinator.simulation import run_experiment
from tests.coordinator.monitor.runs import TOKEN, example

PAUSE_S = 8.0  # between the runs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def until(condition, timeout_s: float) -> float:
    """Seconds until ``condition()`` holds (polled every 20 ms); raises after ``timeout_s``."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout_s:
            raise TimeoutError(f"not within {timeout_s} s")
        time.sleep(0.02)
    return time.monotonic() - start


def monitored(experiment, address: str, output) -> None:
    """A real run paced to the wall clock, on a Monitor service at ``address``."""
    with monitoring(experiment, address, TOKEN, stream=io.StringIO()) as hooks:
        run_experiment(experiment, output=output, realtime=True, **hooks)


def test_the_monitor_notices_a_new_run_on_the_same_address_within_2_s(tmp_path) -> None:
    address = f"127.0.0.1:{free_port()}"
    first = example("sdof.toml", 1.0)
    second = dataclasses.replace(example("sdof.toml", 4.0), name="the next run")
    server = MonitorWebServer(("127.0.0.1", 0), address)
    feed = server.feed
    try:
        monitored(first, address, tmp_path / "first.h5")
        until(lambda: feed.info is not None and feed.progress is not None and feed.progress.state == "completed",
              10.0)
        assert feed.info.experiment == first.name
        time.sleep(PAUSE_S)
        run = threading.Thread(target=monitored, args=(second, address, tmp_path / "second.h5"))
        run.start()
        noticed = until(lambda: feed.info.experiment == "the next run", 30.0)
        run.join(30)
        assert noticed < 2.0, f"the new run was noticed after {noticed:.1f} s"
    finally:
        server.server_close()
