"""A run that ends before its first step (a site held since an earlier run refuses it at once) has no frame to
show; an observer still learns why it ended: the Watch ends ABORTED with the run's final state, and the page keeps
that reason in its link line, after the coordinator has gone too (issue 31: the monitor says a site held and why).
Real gRPC and HTTP on loopback; the run's final state is the one `hybridsim run` gives a held site's refusal."""

from __future__ import annotations

import http.client
import json
import threading
import time

import grpc
import pytest

from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.monitor.publisher import Publisher
from hybridsim.coordinator.monitor.service import MonitorServer
from hybridsim.coordinator.monitor.web import MonitorWebServer
from hybridsim.v1 import monitor_pb2 as pb
from hybridsim.v1.monitor_pb2_grpc import MonitorStub
from tests.coordinator.monitor.runs import TOKEN, example

STATE = ("stopped: module 'site' (daemon at 127.0.0.1:50051) at step 1 (t = 0.01 s): the site is held since actuator "
         "1: load cell reads 43.08 N, beyond its limit 40 N at sample 586")


def link_text(port: int) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5.0)
    try:
        connection.request("GET", "/api/state")
        return str(json.loads(connection.getresponse().read())["link"]["text"])
    finally:
        connection.close()


def wait_for(condition, what: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_an_observer_and_the_page_learn_why_a_run_ended_before_its_first_step() -> None:
    control = RunControl()
    publisher = Publisher(example("sdof.toml"), control)
    server = MonitorServer("127.0.0.1:0", publisher, control, TOKEN)
    address = server.start()
    publisher.start()
    page = MonitorWebServer(("127.0.0.1", 0), address)
    threading.Thread(target=page.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    port = page.server_address[1]
    try:
        with grpc.insecure_channel(address) as channel:
            stub = MonitorStub(channel)
            waiting = stub.Watch(pb.WatchRequest(), timeout=10)  # waits for a first step that never comes
            publisher.close(STATE)
            for watch in (waiting, stub.Watch(pb.WatchRequest(), timeout=10)):  # the second: after the end
                with pytest.raises(grpc.RpcError) as ended:
                    list(watch)
                assert ended.value.code() == grpc.StatusCode.ABORTED
                assert ended.value.details() == f"the run ended before its first step: {STATE}"
        wait_for(lambda: STATE in link_text(port), "the page's link line")
    finally:
        server.stop()
    wait_for(lambda: "no coordinator at" in link_text(port), "the page to see the coordinator gone")
    assert STATE in link_text(port)  # the reason stays until a new run starts
    page.shutdown()
    page.server_close()
