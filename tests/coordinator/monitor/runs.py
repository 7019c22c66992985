"""A real run on a monitor, on a thread of the test process, and the gRPC stubs to reach it."""

from __future__ import annotations

import contextlib
import io
import math
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from hybridsim.coordinator.bench_longrun import repeated_record
from hybridsim.coordinator.cli.run import with_bar
from hybridsim.coordinator.experiment import Experiment, parse_experiment
from hybridsim.coordinator.monitor.publisher import Publisher
from hybridsim.coordinator.monitor.session import monitoring
from hybridsim.coordinator.pacing import ProgressBar
from hybridsim.coordinator.simulation import RunResult, run_experiment
from hybridsim.v1 import monitor_pb2_grpc as pb_grpc
from tests.conftest import EXAMPLES

TOKEN = "test-token-1234"


def example(name: str, duration_s: float | None = None, repeated_in: Path | None = None) -> Experiment:
    """An example experiment, optionally cut to its first ``duration_s`` seconds; with ``repeated_in`` too, over the
    first 40 s of El Centro repeated for that long (its CSV written in that folder)."""
    path = EXAMPLES / name
    table = tomllib.loads(path.read_text())
    if duration_s is not None:
        table["experiment"]["duration"] = duration_s
    if repeated_in is not None:
        table["ground_motion"]["file"] = str(repeated_record(repeated_in, 40.0, math.ceil(duration_s / 40.0) + 1))
    return parse_experiment(table, base_dir=path.parent, source=path.read_text())


@dataclass
class MonitoredRun:
    address: str
    publisher: Publisher
    thread: threading.Thread
    outcome: dict[str, Any] = field(default_factory=dict)

    def stub(self, **options: Any) -> pb_grpc.MonitorStub:
        channel = grpc.insecure_channel(self.address, options=list(options.items()))
        return pb_grpc.MonitorStub(channel)

    @property
    def result(self) -> RunResult:
        return self.outcome["result"]


@contextlib.contextmanager
def monitored_run(experiment: Experiment, output: Path, *, realtime: bool = False, bar: ProgressBar | None = None,
                  hold_after: int | None = None, **publisher_options: Any) -> Iterator[MonitoredRun]:
    """Start ``experiment`` on a monitor at a free loopback port (with ``bar``: the progress bar of `hybridsim run`
    too; with ``hold_after``: held after that step, as the monitor's Hold holds it, until the test resumes it);
    abort it at the end if still running."""
    ready = threading.Event()
    state: dict[str, Any] = {}

    def run() -> None:
        printed = io.StringIO()
        try:
            with monitoring(experiment, "127.0.0.1:0", TOKEN, stream=printed, **publisher_options) as hooks:
                state["address"] = printed.getvalue().split(" on ")[1].split(";")[0]
                state["hooks"] = hooks
                ready.set()
                hooks = dict(with_bar(hooks, bar))
                if hold_after is not None:
                    control = hooks["control"]
                    hooks["listeners"] = [*hooks["listeners"], lambda n, _: control.hold() if n == hold_after else None]
                state["result"] = run_experiment(experiment, output=output, realtime=realtime, **hooks)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            state["error"] = exc
        finally:
            ready.set()

    thread = threading.Thread(target=run, name="monitored-run", daemon=True)
    thread.start()
    ready.wait(30)
    if "address" not in state:
        raise state.get("error") or RuntimeError("the monitored run did not start")
    monitored = MonitoredRun(state["address"], state["hooks"]["listeners"][0], thread, state)
    try:
        yield monitored
    finally:
        state["hooks"]["control"].abort("the test ended")
        thread.join(30)
