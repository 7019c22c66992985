"""The Monitor service of a real run on loopback: the stream, the token-guarded controls, stalled observers."""

from __future__ import annotations

import time

import grpc
import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.recorder import read_results
from hybridsim.v1 import monitor_pb2 as pb
from hybridsim.v1.monitor_pb2_grpc import MonitorStub
from tests.coordinator.monitor.runs import TOKEN, example, monitored_run


def _wait_for(condition, timeout_s: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def test_an_observer_sees_exactly_what_the_results_file_stores(tmp_path) -> None:
    with monitored_run(example("sdof.toml"), tmp_path / "sdof.h5") as run:
        events = list(run.stub().Watch(pb.WatchRequest(), timeout=60))
        run.thread.join(30)
    info, frames = events[0].info, [e.frame for e in events[1:]]
    assert (info.experiment, info.total_steps, list(info.response_dofs)) == ("sdof", 4118, ["x"])
    assert [m.name for m in info.modules] == ["column"] and info.modules[0].has_command
    steps = np.concatenate([f.step for f in frames])
    assert np.all(np.diff(steps) > 0) and steps[-1] == 4118
    assert set(range(0, 4119, info.decimation)) <= set(steps.tolist())  # no sampled step lost
    stored = read_results(tmp_path / "sdof.h5")
    np.testing.assert_array_equal(np.concatenate([f.response for f in frames]), stored["displacement"][steps, 0])
    np.testing.assert_array_equal(np.concatenate([f.force for f in frames]), stored["modules/column/force"][steps, 0])
    last = frames[-1].progress
    assert last.state == "completed" and last.step == 4118
    assert sum(last.step_time_counts) == 4118
    assert last.late_steps == int(np.count_nonzero(stored["wall_step_s"][1:] > 0.01))


def test_controls_without_the_token_or_with_a_wrong_one_are_refused(tmp_path) -> None:
    with monitored_run(example("monitor_shear_building.toml"), tmp_path / "refused.h5", realtime=True) as run:
        stub = run.stub()
        _wait_for(lambda: run.publisher.latest_step > 10, what="the first steps")
        for call in (stub.Hold, stub.Resume, stub.Abort):
            for token in ("", "not-the-token"):
                with pytest.raises(grpc.RpcError) as refused:
                    call(pb.ControlRequest(token=token), timeout=5)
                assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        before = run.publisher.latest_step
        time.sleep(0.2)
        assert run.publisher.latest_step > before  # nothing held, nothing aborted
        assert run.thread.is_alive()


def test_hold_stops_within_one_step_resume_continues_abort_ends_with_a_readable_file(tmp_path) -> None:
    with monitored_run(example("monitor_shear_building.toml"), tmp_path / "held.h5", realtime=True) as run:
        stub = run.stub()
        _wait_for(lambda: run.publisher.latest_step > 200, what="200 steps")
        held = stub.Hold(pb.ControlRequest(token=TOKEN), timeout=5)
        assert held.state == "held"
        time.sleep(0.05)
        stopped_at = run.publisher.latest_step
        assert stopped_at - held.step <= 1  # at most the step in flight completes
        time.sleep(0.5)
        assert run.publisher.latest_step == stopped_at
        resumed = stub.Resume(pb.ControlRequest(token=TOKEN), timeout=5)
        assert (resumed.state, resumed.step) == ("running", stopped_at)
        _wait_for(lambda: run.publisher.latest_step > stopped_at + 100, what="steps after resume")
        aborted = stub.Abort(pb.ControlRequest(token=TOKEN), timeout=5)
        run.thread.join(30)
    assert isinstance(run.outcome["error"], RunStopped)
    stored = read_results(tmp_path / "held.h5")
    assert stored["attrs"]["status"].startswith("stopped: aborted by the operator after step")
    last = stored["time"].size - 1
    assert last - aborted.step <= 1
    assert stored["displacement"].shape == (last + 1, 5) and np.isfinite(stored["displacement"]).all()
    with pytest.raises(grpc.RpcError) as late:
        stub.Hold(pb.ControlRequest(token=TOKEN), timeout=2)
    assert late.value.code() == grpc.StatusCode.UNAVAILABLE  # the monitor ended with the run


def test_more_observers_than_the_limit_are_refused_and_a_gone_one_is_forgotten(tmp_path) -> None:
    with monitored_run(example("monitor_shear_building.toml"), tmp_path / "many.h5", realtime=True,
                       max_observers=2) as run:
        channels = [grpc.insecure_channel(run.address) for _ in range(3)]
        streams = [MonitorStub(c).Watch(pb.WatchRequest()) for c in channels[:2]]
        assert all(next(s).HasField("info") for s in streams)
        with pytest.raises(grpc.RpcError) as refused:
            next(MonitorStub(channels[2]).Watch(pb.WatchRequest(), timeout=5))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        channels[0].close()
        _wait_for(lambda: len(run.publisher.observers()) == 1, 10, "the closed observer to be forgotten")
        assert next(MonitorStub(channels[2]).Watch(pb.WatchRequest(), timeout=5)).HasField("info")


def test_a_stalled_observer_does_not_slow_the_step_loop(tmp_path) -> None:
    """One run, not paced: phases without and with an observer that takes nothing, interleaved (so that the
    load of the machine drifts alike over both), compared by the ratio of their median step times."""
    # a phase lasts 5000 steps (about 0.5 s), a stalled one also until the publisher has dropped frames for its
    # observer (its queue and the transport's window full: with the loop not paced the publisher thread gets
    # the GIL a few times a second among the gRPC threads, so a phase may need seconds); the record leaves room
    experiment = example("monitor_shear_building.toml", duration_s=400.0, repeated_in=tmp_path)  # 409600 steps
    phase, first = 5000, 2000
    switches, stalled_subscriptions = [], []
    with monitored_run(experiment, tmp_path / "stalled.h5", period_s=0.001, queue_frames=4) as run:
        _wait_for(lambda: run.publisher.latest_step >= first, what="the first steps")
        for k in range(6):
            switches.append(start := run.publisher.latest_step)
            if k % 2:  # a stalled observer for this phase: it gets the history so far and never reads
                known = set(map(id, run.publisher.observers()))
                call = run.stub(**{"grpc.http2.bdp_probe": 0, "grpc.http2.lookahead_bytes": 1024}).Watch(pb.WatchRequest())
                _wait_for(lambda: set(map(id, run.publisher.observers())) - known, 5, "the stalled observer")
                (stalled,) = [s for s in run.publisher.observers() if id(s) not in known]
                stalled_subscriptions.append(stalled)
                _wait_for(lambda: run.publisher.latest_step >= start + phase and stalled.dropped > 0, 25,
                          f"phase {k}: frames dropped for the stalled observer")
            else:
                if k:
                    call.cancel()
                _wait_for(lambda: run.publisher.latest_step >= start + phase, what=f"phase {k}")
        switches.append(run.publisher.latest_step)
        call.cancel()
    wall = read_results(tmp_path / "stalled.h5")["wall_step_s"]
    phases = [wall[a + 1:b + 1] for a, b in zip(switches, switches[1:])]
    without, with_stalled = np.median(np.concatenate(phases[0::2])), np.median(np.concatenate(phases[1::2]))
    dropped = [s.dropped for s in stalled_subscriptions]
    print(f"median step {1e6 * without:.1f} us without, {1e6 * with_stalled:.1f} us with a stalled observer "
          f"(ratio {with_stalled / without:.3f}); frames dropped for the stalled observers: {dropped}")
    assert all(dropped)  # they really stalled: the publisher dropped their frames
    assert with_stalled / without < 1.5
