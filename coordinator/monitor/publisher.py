"""The observer publisher: a step listener that costs the step loop two assignments, and a thread that makes frames.

The step loop calls the publisher with the index of each completed step; the
publisher only keeps that index and the history arrays.  Its own thread wakes
every ``period_s``, turns the rows completed since its last frame into one
frame (:mod:`hybridsim.coordinator.monitor.frames`) and offers it to every observer's
bounded queue.  A queue that is full drops its oldest frame, so an observer
that is slow, stalled or dead loses frames and never holds up anything else.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Mapping

import numpy as np

from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.experiment import Experiment
from hybridsim.coordinator.monitor.frames import FrameBuilder, merged_chunks, put_counters, run_info
from hybridsim.coordinator.monitor.layout import MAX_POINTS, layout_of_experiment
from hybridsim.v1 import monitor_pb2 as pb

class TooManyObservers(Exception):
    """The publisher already serves its maximum number of observers."""


class Subscription:
    """One observer's queue of frames: bounded, dropping the oldest frame when full."""

    def __init__(self, capacity: int) -> None:
        self._frames: collections.deque[pb.Frame] = collections.deque()
        self._capacity = capacity
        self._ready = threading.Condition()
        self.dropped = 0
        self.closed = False

    def offer(self, frame: pb.Frame) -> None:
        with self._ready:
            if len(self._frames) >= self._capacity:
                self._frames.popleft()
                self.dropped += 1
            self._frames.append(frame)
            self._ready.notify()

    def take(self, timeout_s: float) -> pb.Frame | None:
        """The oldest waiting frame, or None after ``timeout_s`` (s) or once closed."""
        with self._ready:
            if not self._frames and not self.closed:
                self._ready.wait(timeout_s)
            return self._frames.popleft() if self._frames else None

    @property
    def pending(self) -> int:
        return len(self._frames)

    def close(self) -> None:
        with self._ready:
            self.closed = True
            self._ready.notify()


class Publisher:
    """Publishes a run of ``experiment`` to observers; pass it to ``run_experiment(listeners=[...])``.

    ``period_s`` is the interval between frames (s), ``queue_frames`` the frames an observer may
    fall behind before it drops some, ``heartbeat_s`` the longest interval without a frame (while
    held); ``max_points`` sets the decimation (samples over the whole record); ``realtime``: the run is paced
    to the wall clock.  The modules' DOF names are the ones they described themselves with (the run's window
    carries the descriptions: ``arrays.descriptions``).
    """

    def __init__(self, experiment: Experiment, control: RunControl, *, period_s: float = 0.05,
                 queue_frames: int = 64, max_observers: int = 8, heartbeat_s: float = 0.5,
                 max_points: int = MAX_POINTS, realtime: bool = False) -> None:
        self.experiment, self.control, self.realtime = experiment, control, realtime
        self.period_s, self.queue_frames, self.max_observers = period_s, queue_frames, max_observers
        self.heartbeat_s, self.max_points = heartbeat_s, max_points
        self._arrays: Mapping[str, np.ndarray] | None = None
        self._latest = -1
        self._builder: FrameBuilder | None = None
        self._info: pb.RunInfo | None = None
        self._backlog: list[pb.Frame] = []
        self._subscriptions: list[Subscription] = []
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._wake = threading.Event()
        self._final_state: str | None = None
        self._rate: collections.deque[tuple[float, int]] = collections.deque()
        self._started_at: float | None = None
        self._thread = threading.Thread(target=self._run, name="hybridsim-monitor-publisher", daemon=True)

    # -- the step listener (the step loop's thread) ---------------------------------------------
    def __call__(self, n: int, arrays: Mapping[str, np.ndarray]) -> None:
        self._arrays = arrays
        self._latest = n

    @property
    def latest_step(self) -> int:
        """The last completed step the step loop reported (-1 before the first)."""
        return self._latest

    # -- life cycle --------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def close(self, state: str, drain_s: float = 2.0) -> None:
        """Publish the final ``state`` ("completed" or "stopped: ..."), wait up to ``drain_s`` (s) for
        observers to take their frames, and end every observer's stream.  The last frame holds every row the
        run's window completed: a step whose indicators stopped the run has its row (it is in the results file)
        but was never reported to the listeners."""
        window = getattr(self._arrays, "window", None)
        if window is not None:  # (the loop has ended: its window no longer changes)
            self._latest = max(self._latest, window.rows - 1)
        self._final_state = state
        self._wake.set()
        self._thread.join(timeout=5.0)
        deadline = time.monotonic() + drain_s
        while time.monotonic() < deadline and any(s.pending for s in self._subscriptions):
            time.sleep(0.02)
        self._ready.set()
        with self._lock:
            for subscription in self._subscriptions:
                subscription.close()

    @property
    def ended(self) -> bool:
        return self._final_state is not None

    @property
    def final_state(self) -> str:
        """The run's final state ("completed", "stopped: ..."); empty while it runs."""
        return self._final_state or ""

    # -- observers (their own threads) -------------------------------------------------------------
    def watch(self, timeout_s: float) -> tuple[pb.RunInfo, list[pb.Frame], Subscription] | None:
        """Wait up to ``timeout_s`` (s) for the first step; then the run's info, the history so far (a few
        large frames) and a subscription to the frames that follow.  None if no step came in time."""
        if not self._ready.wait(timeout_s) or self._info is None:
            return None
        with self._lock:
            if len(self._subscriptions) >= self.max_observers:
                raise TooManyObservers(f"the monitor already serves {self.max_observers} observers")
            subscription = Subscription(self.queue_frames)
            self._subscriptions.append(subscription)
            backlog = list(self._backlog)
        return self._info, merged_chunks(backlog), subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            if subscription in self._subscriptions:
                self._subscriptions.remove(subscription)

    def observers(self) -> list[Subscription]:
        with self._lock:
            return list(self._subscriptions)

    # -- the publisher thread -------------------------------------------------------------------------
    def _run(self) -> None:
        rows, last_sent, last_state = 0, 0.0, ""
        while True:
            final = self._final_state
            n, arrays = self._latest, self._arrays
            if arrays is not None and self._builder is None:
                self._start_frames(arrays)
            builder = self._builder
            if builder is not None:
                now = time.monotonic()
                state = final or self._state()
                frame = None
                if n + 1 > rows:
                    rows = max(rows, getattr(arrays, "first", 0))  # rows that left the run's window are on disk
                    try:
                        frame = builder.frame(arrays, rows, n + 1)  # type: ignore[arg-type]
                    except IndexError:  # the loop overtook the frame's first rows as it was built (the builder
                        continue  # changes nothing before it has read them all): again from the window's first
                    rows = n + 1
                elif state != last_state or now - last_sent >= self.heartbeat_s or final:
                    frame = pb.Frame(progress=builder.progress(n, float(arrays["time"][n])))  # type: ignore[index]
                if frame is not None:
                    put_counters(frame.progress, getattr(arrays, "counters", {}))
                    self._stamp(frame.progress, state, now)
                    self._publish(frame)
                    last_sent, last_state = now, state
            if final is not None:
                return
            self._wake.wait(self.period_s)

    def _start_frames(self, arrays: Mapping[str, np.ndarray]) -> None:
        layout = layout_of_experiment(self.experiment, arrays, getattr(arrays, "descriptions", None),
                                      realtime=self.realtime, max_points=self.max_points)
        self._builder = FrameBuilder(layout)
        self._info = run_info(layout)
        self._started_at = time.monotonic()
        self._ready.set()

    def _state(self) -> str:
        if self.control.aborted:
            return "aborting"
        if self.control.notice:  # the run holds itself: a stalled results writer
            return f"held: {self.control.notice}"
        return "held" if self.control.held else "running"

    def _stamp(self, progress: pb.Progress, state: str, now: float) -> None:
        """State, elapsed time and ETA (from the step rate over the last few seconds of running)."""
        progress.state = state
        progress.elapsed_s = now - (self._started_at or now)
        if state != "running":
            self._rate.clear()
            progress.eta_s = 0.0 if state == "completed" else -1.0
            return
        self._rate.append((now, progress.step))
        while now - self._rate[0][0] > 3.0:
            self._rate.popleft()
        (t0, n0), (t1, n1) = self._rate[0], self._rate[-1]
        progress.eta_s = (progress.total_steps - n1) * (t1 - t0) / (n1 - n0) if n1 > n0 else -1.0

    def _publish(self, frame: pb.Frame) -> None:
        with self._lock:
            if len(frame.step):
                self._backlog.append(frame)
            for subscription in self._subscriptions:
                subscription.offer(frame)

