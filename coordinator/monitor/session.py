"""`hybridsim run ... --monitor HOST:PORT`: serve the Monitor service for the length of one run."""

from __future__ import annotations

import argparse
import contextlib
import secrets
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import Experiment
from hybridsim.coordinator.monitor.publisher import Publisher
from hybridsim.coordinator.monitor.service import MonitorServer
from hybridsim.wire.security import is_loopback

DEFAULT_WEB = "127.0.0.1:8765"
"""where `hybridsim monitor` serves its page unless told otherwise"""


def add_monitor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--monitor", metavar="HOST:PORT",
                        help="serve the live monitor (hybridsim.v1.Monitor) there; PORT alone binds loopback, "
                             "port 0 picks a free one")
    parser.add_argument("--monitor-token", metavar="TOKEN",
                        help="the access token Hold/Resume/Abort need (default: a fresh random one, printed)")


@contextlib.contextmanager
def monitoring(experiment: Experiment, address: str | None, token: str | None = None, *,
               stream: TextIO = sys.stderr, **publisher_options: Any) -> Iterator[dict[str, Any]]:
    """The keyword arguments of ``run_experiment`` (control and listeners) that put the run on a monitor
    at ``address`` (nothing when it is None); the final state goes to the observers however the run ends."""
    if address is None:
        yield {}
        return
    control = RunControl()
    token = token or secrets.token_urlsafe(12)
    publisher = Publisher(experiment, control, **publisher_options)
    server = MonitorServer(address, publisher, control, token)
    bound = server.start()
    publisher.start()
    print(f"monitor: serving hybridsim.v1.Monitor on {bound}; access token {token}", file=stream)
    if not is_loopback(bound):
        print(f"monitor: {bound} is not a loopback address: anyone who reaches it can watch the run", file=stream)
    print(f"monitor: watch in a browser: hybridsim monitor {bound}  then open http://{DEFAULT_WEB}/#token={token}",
          file=stream, flush=True)
    state = "stopped: interrupted"
    try:
        yield {"control": control, "listeners": [publisher]}
        state = "completed"
    except RunStopped as exc:
        state = f"stopped: {exc}"
        raise
    except BaseException as exc:
        if not isinstance(exc, KeyboardInterrupt):
            state = f"stopped: {type(exc).__name__}: {exc}"
        raise
    finally:
        publisher.close(state)
        server.stop()
