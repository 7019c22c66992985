"""Between the module interface (hybridsim.modules.base) and the wire messages (hybridsim.v1).

Both ends of the wire use these: the site's servicer (hybridsim.wire.server) and
the coordinator's client (hybridsim.wire.remote).  Vectors are packed repeated
doubles in SI units; matrices are row-major.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from hybridsim.v1 import module_pb2 as pb
from hybridsim.wire.contract import Command, Description, Dof, ModuleError, Record, Role, Session, StepResult

PROTOCOL = pb.ProtocolVersion(major=1, minor=0)
"""The protocol this code speaks: peers of another major version are refused."""

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Module"].full_name
"""'hybridsim.v1.Module', also the grpc.health.v1 service name a site reports."""

REFUSED_STEP_KEY = "hybridsim-refused-step"
"""Trailing-metadata key a site sets (to the step ID) when it refuses a step."""

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""Largest message either end accepts by default (4 MiB: ~500k doubles)."""

TAKEOVER_KEY = "hybridsim-takeover"
"""Metadata key of an Open that takes over the session another coordinator holds open (value ``yes``)."""
TOKEN_KEY = "authorization"
"""Metadata key of a site's access token on every call and stream: ``authorization: Bearer TOKEN``."""


ROLES = {"substructure": pb.ROLE_SUBSTRUCTURE, "control_backend": pb.ROLE_CONTROL_BACKEND}
"""Description.role -> module.proto's Role"""


def bearer(token: str) -> str:
    """The ``authorization`` metadata value that carries ``token``."""
    return f"Bearer {token}"


def version_text(version: pb.ProtocolVersion) -> str:
    return f"{version.major}.{version.minor}"


def version_refusal(peer: pb.ProtocolVersion, peer_role: str) -> str | None:
    """A readable refusal when ``peer`` speaks another major version, else None."""
    if peer.major == PROTOCOL.major:
        return None
    return (f"protocol version mismatch: the {peer_role} speaks hybridsim protocol {version_text(peer)}, "
            f"this end speaks {version_text(PROTOCOL)}; run the same major version on both ends")


def vector(values: Sequence[float]) -> np.ndarray:
    """A packed repeated double field as a new float vector."""
    return np.fromiter(values, dtype=float, count=len(values))


def doubles(values: np.ndarray | Sequence[float]) -> list[float]:
    """A vector as the Python floats a repeated double field takes fastest (the same values, bit for bit)."""
    return np.asarray(values, dtype=float).tolist()


def matrix_to_proto(matrix: np.ndarray | None) -> pb.Matrix | None:
    if matrix is None:
        return None
    arr = np.asarray(matrix, dtype=float)
    return pb.Matrix(rows=arr.shape[0], cols=arr.shape[1], values=arr.ravel())


def matrix_from_proto(message: pb.Matrix) -> np.ndarray:
    return vector(message.values).reshape(message.rows, message.cols)


def description_to_proto(site: str, description: Description) -> pb.DescribeReply:
    return pb.DescribeReply(
        version=PROTOCOL,
        site=site,
        kind=description.kind,
        dofs=[pb.Dof(name=d.name, kind=d.kind) for d in description.dofs],
        mass=matrix_to_proto(description.mass),
        damping=matrix_to_proto(description.damping),
        can_checkpoint=description.can_checkpoint,
        own_clock=description.own_clock,
        control_dt=description.control_dt or 0.0,
        info=description.info,
        role=ROLES[description.role],
    )


def description_from_proto(reply: pb.DescribeReply) -> Description:
    return Description(
        kind=reply.kind,
        dofs=tuple(Dof(d.name, d.kind) for d in reply.dofs),  # type: ignore[arg-type]
        mass=matrix_from_proto(reply.mass) if reply.HasField("mass") else None,
        damping=matrix_from_proto(reply.damping) if reply.HasField("damping") else None,
        can_checkpoint=reply.can_checkpoint,
        own_clock=reply.own_clock,
        control_dt=reply.control_dt or None,
        info=dict(reply.info),
        role=_role(reply.role),
    )


CONFIG_KEY = "config"
"""Describe info key: the site's module configuration as it loaded it (canonical JSON, when small enough)"""
CONFIG_DIGEST_KEY = "config_sha256"
"""Describe info key: the SHA-256 of that canonical JSON (always)"""
MAX_CONFIG_INFO_BYTES = 256 * 1024


def canonical_config(config: object) -> str:
    """A configuration as canonical JSON: keys sorted, every number a float (1500000 == 1.5e6)."""
    def normal(value: object) -> object:
        if isinstance(value, dict):
            return {str(k): normal(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [normal(v) for v in value]
        if isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        return value
    return json.dumps(normal(config), sort_keys=True, separators=(",", ":"), default=str)


def config_info(config: object) -> dict[str, str]:
    """What a site's Describe reports of its configuration: its digest, and the configuration when small."""
    text = canonical_config(config)
    info = {CONFIG_DIGEST_KEY: hashlib.sha256(text.encode()).hexdigest()}
    if len(text) <= MAX_CONFIG_INFO_BYTES:
        info[CONFIG_KEY] = text
    return info


RECORD_CHUNK_VALUES = 65536
"""values per RecordChunk (512 KiB of doubles, far below any message limit)"""


def records_to_proto(records: Sequence[Record]) -> Iterator[pb.RecordChunk]:
    """Each record as chunks of whole rows; the first chunk of a record carries its units and names."""
    for record in records:
        values = np.ascontiguousarray(record.values, dtype=float).reshape(len(record.values), len(record.columns))
        rows = max(1, RECORD_CHUNK_VALUES // max(values.shape[1], 1))
        for first in range(0, max(values.shape[0], 1), rows):
            head = first == 0
            yield pb.RecordChunk(name=record.name, columns=values.shape[1], values=values[first:first + rows].ravel(),
                                 units=record.units if head else (), column_names=record.columns if head else (),
                                 description=record.description if head else "",
                                 streamed=record.first_row is not None, first_row=record.first_row or 0)


def records_from_proto(chunks: Iterable[pb.RecordChunk]) -> list[Record]:
    """The records of a stream of chunks (in their order)."""
    parts: dict[str, list[np.ndarray]] = {}
    heads: dict[str, pb.RecordChunk] = {}
    for chunk in chunks:
        heads.setdefault(chunk.name, chunk)
        parts.setdefault(chunk.name, []).append(vector(chunk.values).reshape(-1, chunk.columns))
    return [Record(name, np.concatenate(parts[name]), tuple(head.units), tuple(head.column_names), head.description,
                   head.first_row if head.streamed else None)
            for name, head in heads.items()]


def _role(value: int) -> Role:
    for role, number in ROLES.items():
        if number == value:
            return role  # type: ignore[return-value]
    raise ModuleError(f"the site describes its module in role {value}, which this end does not know: run the same "
                      "version of hybridsim on both ends")


def session_to_proto(session: Session) -> pb.OpenRequest:
    return pb.OpenRequest(version=PROTOCOL, dt=session.dt, dof_names=session.dof_names,
                          run_id=session.run_id, tolerance=session.tolerance, no_records=not session.records,
                          iterating=session.iterating)


def session_from_proto(request: pb.OpenRequest) -> Session:
    return Session(dt=request.dt, dof_names=tuple(request.dof_names), run_id=request.run_id,
                   tolerance=request.tolerance, records=not request.no_records, iterating=request.iterating)


def command_to_proto(command: Command) -> pb.Command:
    return pb.Command(
        time=command.time,
        displacement=doubles(command.displacement),
        velocity=() if command.velocity is None else doubles(command.velocity),
        acceleration=() if command.acceleration is None else doubles(command.acceleration),
    )


def step_request(session_id: str, step: int, commit_step: int | None, command: Command | None,
                 execute: bool) -> pb.StepRequest:
    """The StepRequest of one lockstep step, what every channel carries (module.proto).

    Filled in place (about twice as fast as nested constructors: this is the per-step path)."""
    request = pb.StepRequest(session_id=session_id, step=step, execute=execute)
    if commit_step is not None:
        request.commit_step = commit_step
    if command is not None:
        message = request.command
        message.time = command.time
        message.displacement.extend(doubles(command.displacement))
        if command.velocity is not None:
            message.velocity.extend(doubles(command.velocity))
        if command.acceleration is not None:
            message.acceleration.extend(doubles(command.acceleration))
    return request


def step_reply(step: int, result: StepResult | None) -> pb.StepReply:
    """The StepReply to a StepRequest of ``step``: with the result if it executed (filled in place)."""
    reply = pb.StepReply(step=step)
    if result is not None:
        message = reply.result
        message.step = result.step
        message.displacement.extend(doubles(result.displacement))
        message.force.extend(doubles(result.force))
        if result.counters:
            message.counters.update(result.counters)
    return reply


def step_result(reply: pb.StepReply) -> StepResult | None:
    """The result a StepReply carries; None when its request did not execute."""
    return result_from_proto(reply.result) if reply.HasField("result") else None


def command_from_proto(message: pb.Command) -> Command:
    """The command as sent; empty velocity or acceleration means not given."""
    return Command(
        time=message.time,
        displacement=vector(message.displacement),
        velocity=vector(message.velocity) if len(message.velocity) else None,
        acceleration=vector(message.acceleration) if len(message.acceleration) else None,
    )


def result_to_proto(result: StepResult) -> pb.StepResult:
    return pb.StepResult(step=result.step, displacement=doubles(result.displacement), force=doubles(result.force),
                         counters=result.counters or {})


def result_from_proto(message: pb.StepResult) -> StepResult:
    return StepResult(step=message.step, displacement=vector(message.displacement), force=vector(message.force),
                      counters=dict(message.counters) or None)
