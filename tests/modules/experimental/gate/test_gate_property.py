"""A property of the gate (issue 31): whatever sequence of sessions, steps, trials taken back, checkpoints
restored (some edited), measured overloads and operator clears a site goes through, its control never receives a
command beyond the stroke limit nor one farther than the increment limit from where its actuator was, and
nothing while the site is held.  The control here records every command it receives (a virtual actuator that
reaches each command, a spring load cell); the same gate stands in front of every control
(test_gate_paths.py: a real controller process)."""

from __future__ import annotations

import json
from unittest import mock

import numpy as np
from hypothesis import HealthCheck, example, given, settings, strategies as st

from hybridsim.modules.config_schema import Key, Schema, Table
from hybridsim.modules.experimental.controls import CONTROLS
from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import Command, ModuleError, Session

STROKE, INCREMENT, FORCE, STIFFNESS = 0.010, 0.002, 600.0, 1.0e5


class Recorder:
    """A virtual actuator (it reaches each command at the end of its sample, and goes back with a state) that
    records every command and the position it was at when the command came."""

    KEY = Key(Table(Schema("recorder", "A recording actuator.")), "a recording actuator")
    PROBES = True
    REWINDS = True
    CHECKPOINT_REFUSAL = None
    log: list[tuple[float, float]] = []
    """(position before, command) of every command any Recorder received"""

    def __init__(self) -> None:
        self.position = 0.0

    @classmethod
    def open(cls, table, context):
        return cls()

    def read(self):
        return self.reading(), np.array([STIFFNESS * self.position])

    def reading(self):
        return np.array([self.position])

    def command(self, strokes):
        Recorder.log.append((self.position, float(strokes[0])))
        self.position = float(strokes[0])
        return self.read()

    def probe(self, strokes):
        return STIFFNESS * np.asarray(strokes, float)

    def commit(self):
        pass

    def state(self):
        return self.position

    def set_state(self, state):
        self.position = float(state)

    def close(self):
        return {}


ACTIONS = st.lists(st.one_of(
    st.tuples(st.just("step"), st.floats(-0.015, 0.015)),
    st.tuples(st.just("retry"), st.floats(-0.015, 0.015)),  # the same step again with another target
    st.tuples(st.just("checkpoint"), st.just(0.0)),
    st.tuples(st.just("restore"), st.sampled_from([None, [], [float("nan")], [50.0], [3.0]])),
    st.tuples(st.just("reopen"), st.just(0.0)),
    st.tuples(st.just("clear"), st.just(0.0)),
), max_size=40)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(ACTIONS)
@example([("checkpoint", 0.0), ("restore", [3.0]), ("step", 0.00390625)])  # an edited checkpoint: was a 3.9 mm jump
def test_no_command_beyond_the_limits_or_while_held(actions) -> None:
    Recorder.log = []
    with mock.patch.dict(CONTROLS, {"recorder": f"{__name__}:Recorder"}):
        module = build_module("experimental", {
            "dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u"},
            "gate": {"increment": INCREMENT, "start_tolerance": 0.02},
            "actuators": [{"stroke": STROKE, "force": FORCE}], "backend": {"recorder": {}}})
        state = {"step": 0, "n": 0, "checkpoint": None, "held_at": None}

        def open_session() -> None:
            module.open(Session(0.01, ("u",), iterating=True))
            state["n"] = 0
            call(lambda: (module.propose(_next(), Command(0.0, np.zeros(1))), module.execute(state["step"]),
                          module.commit(state["step"])))

        def _next() -> int:
            state["step"] += 1
            return state["step"]

        def call(action) -> None:
            held = module.interlock.reason is not None
            sent = len(Recorder.log)
            try:
                action()
            except ModuleError:
                pass
            if held:
                assert len(Recorder.log) == sent, "a command reached the control while the site was held"

        open_session()
        for kind, value in actions:
            if kind in ("step", "retry"):
                if kind == "step":
                    state["n"] += 1
                    step = _next()
                else:
                    step = _next()
                n = max(state["n"], 1)
                call(lambda: (module.propose(step, Command(n * 0.01, np.array([value]))), module.execute(step)))
                if kind == "step":
                    call(lambda: module.commit(step))
            elif kind == "checkpoint":
                call(lambda: state.update(checkpoint=module.checkpoint()))
            elif kind == "restore" and state["checkpoint"] is not None:
                data = json.loads(state["checkpoint"])
                if value is not None:
                    data["state"]["site"]["measured_mm"] = value
                call(lambda: module.restore(json.dumps(data).encode()))
            elif kind == "reopen":
                module.close()
                call(open_session)
            elif kind == "clear":
                module.interlock.clear("the property's operator")
        module.close()
    for before, command in Recorder.log:
        assert abs(command) <= STROKE
        assert abs(command - before) <= INCREMENT * (1 + 1e-12)
