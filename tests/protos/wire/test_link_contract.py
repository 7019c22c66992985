"""One step contract: the step link's frames carry the fields of module.proto's StepRequest and StepReply, value
for value (protos/hybridsim/v1/step_link.md is the frames' specification, field by field against them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridsim.v1 import module_pb2 as pb
from hybridsim.wire import codec, link
from hybridsim.wire.contract import Command, StepResult

SPEC = Path(pb.__file__).with_name("step_link.md")
IN_FRAMES = {  # message -> its fields, each carried by the frames as step_link.md says (and how it names them)
    pb.StepRequest: {name: f"`{name}`" for name in ("session_id", "step", "commit_step", "command", "execute")},
    pb.Command: {name: f"`command.{name}`" for name in ("time", "displacement", "velocity", "acceleration")},
    pb.StepReply: {name: f"`StepReply.{name}`" for name in ("step", "result")},
    pb.StepResult: {name: f"`StepResult.{name}`" for name in ("step", "displacement", "force", "counters")},
}


@pytest.mark.parametrize("message", IN_FRAMES, ids=lambda m: m.DESCRIPTOR.name)
def test_every_field_of_the_step_messages_is_in_the_frames_and_their_specification(message):
    fields = {field.name for field in message.DESCRIPTOR.fields}
    assert fields == set(IN_FRAMES[message]), (f"{message.DESCRIPTOR.name} changed: carry the new field in the step "
                                               "link's frames, specify it in step_link.md, then list it here")
    spec = SPEC.read_text()
    assert [named for named in IN_FRAMES[message].values() if named not in spec] == []


doubles = st.floats(allow_nan=True, allow_infinity=True, width=64)


@st.composite
def step_requests(draw) -> pb.StepRequest:
    n = draw(st.integers(0, 6))
    vector = st.lists(doubles, min_size=n, max_size=n)
    command = None
    if draw(st.booleans()):
        command = Command(draw(doubles), np.array(draw(vector)), *(np.array(draw(vector)) if draw(st.booleans())
                                                                   else None for _ in range(2)))
    return codec.step_request(draw(st.text(max_size=16)), draw(st.integers(-2**63, 2**63 - 1)),
                              draw(st.none() | st.integers(-2**63, 2**63 - 1)), command, draw(st.booleans()))


def same_vector(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None) == (b is None) and (a is None or np.asarray(a, "<f8").tobytes() == np.asarray(b, "<f8").tobytes())


@settings(max_examples=300, deadline=None)
@given(step_requests())
def test_a_step_frame_carries_what_its_step_request_says(request: pb.StepRequest) -> None:
    command = codec.command_from_proto(request.command) if request.HasField("command") else None
    commit = request.commit_step if request.HasField("commit_step") else None
    frame = link.parse_step(link.step_frame(request.step, commit, command, request.execute)[4:])
    assert (frame.step, frame.commit_step, frame.execute) == (request.step, commit, request.execute)
    assert (frame.command is None) == (command is None)
    if command is not None:
        assert np.float64(frame.command.time).tobytes() == np.float64(command.time).tobytes()
        for name in ("displacement", "velocity", "acceleration"):
            assert same_vector(getattr(frame.command, name), getattr(command, name)), name
    hello = link.hello_frame("token", request.session_id)  # the session id travels once, in the HELLO
    assert hello.endswith(len(request.session_id.encode()).to_bytes(2, "little") + request.session_id.encode())


counter_sets = st.none() | st.dictionaries(st.text(min_size=1, max_size=20).filter(lambda t: len(t.encode()) <= 255),
                                           doubles, max_size=5)


@settings(max_examples=200, deadline=None)
@given(st.integers(-2**63, 2**63 - 1), st.integers(0, 6).flatmap(
    lambda n: st.none() | st.tuples(*[st.lists(doubles, min_size=n, max_size=n)] * 2)), counter_sets)
def test_a_result_or_done_frame_carries_what_its_step_reply_says(step, vectors, counters) -> None:
    result = None if vectors is None else StepResult(step, np.array(vectors[0]), np.array(vectors[1]), counters)
    expected = codec.step_result(codec.step_reply(step, result))
    answered = link.parse_reply(link.result_frame(step, result)[4:])
    if expected is None:
        assert answered == step
    else:
        assert isinstance(answered, StepResult) and answered.step == expected.step
        assert same_vector(answered.displacement, expected.displacement)
        assert same_vector(answered.force, expected.force)
        assert (answered.counters is None) == (expected.counters is None)
        for name, value in (expected.counters or {}).items():  # the same values, bit for bit (NaN included)
            assert np.float64(answered.counters[name]).tobytes() == np.float64(value).tobytes()
        assert set(answered.counters or {}) == set(expected.counters or {})


def test_a_result_without_counters_costs_no_byte_and_a_cut_counters_section_is_malformed() -> None:
    plain = link.result_frame(3, StepResult(3, np.zeros(2), np.ones(2)))
    assert len(plain) == 4 + 13 + 32  # length, kind + step + n, two vectors of two doubles
    counted = link.result_frame(3, StepResult(3, np.zeros(2), np.ones(2), {"clock_held_samples": 4.0}))
    assert len(counted) == len(plain) + 1 + 1 + len("clock_held_samples") + 8
    assert link.parse_reply(counted[4:]).counters == {"clock_held_samples": 4.0}
    for cut in (1, 8, len(counted) - len(plain) - 1):
        with pytest.raises(link.MalformedFrame):
            link.parse_reply(counted[4:-cut])


def test_an_error_frame_carries_the_status_the_stream_would_end_with() -> None:
    with pytest.raises(link.LinkError, match="^step 7 refused: stroke limit$") as refused:
        link.parse_reply(link.error_frame("FAILED_PRECONDITION", "step 7 refused: stroke limit", 7)[4:])
    assert (refused.value.code, refused.value.step) == ("FAILED_PRECONDITION", 7)
    with pytest.raises(link.LinkError) as unavailable:
        link.parse_reply(link.error_frame("UNAVAILABLE", "busy", None)[4:])
    assert (unavailable.value.code, unavailable.value.step) == ("UNAVAILABLE", None)
