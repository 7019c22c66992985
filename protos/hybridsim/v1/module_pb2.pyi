from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROLE_SUBSTRUCTURE: _ClassVar[Role]
    ROLE_CONTROL_BACKEND: _ClassVar[Role]
ROLE_SUBSTRUCTURE: Role
ROLE_CONTROL_BACKEND: Role

class ProtocolVersion(_message.Message):
    __slots__ = ("major", "minor")
    MAJOR_FIELD_NUMBER: _ClassVar[int]
    MINOR_FIELD_NUMBER: _ClassVar[int]
    major: int
    minor: int
    def __init__(self, major: _Optional[int] = ..., minor: _Optional[int] = ...) -> None: ...

class Matrix(_message.Message):
    __slots__ = ("rows", "cols", "values")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLS_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    rows: int
    cols: int
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, rows: _Optional[int] = ..., cols: _Optional[int] = ..., values: _Optional[_Iterable[float]] = ...) -> None: ...

class Dof(_message.Message):
    __slots__ = ("name", "kind")
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: str
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ...) -> None: ...

class DescribeRequest(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: ProtocolVersion
    def __init__(self, version: _Optional[_Union[ProtocolVersion, _Mapping]] = ...) -> None: ...

class DescribeReply(_message.Message):
    __slots__ = ("version", "site", "kind", "dofs", "mass", "damping", "can_checkpoint", "own_clock", "control_dt", "info", "role")
    class InfoEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SITE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DOFS_FIELD_NUMBER: _ClassVar[int]
    MASS_FIELD_NUMBER: _ClassVar[int]
    DAMPING_FIELD_NUMBER: _ClassVar[int]
    CAN_CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    OWN_CLOCK_FIELD_NUMBER: _ClassVar[int]
    CONTROL_DT_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    version: ProtocolVersion
    site: str
    kind: str
    dofs: _containers.RepeatedCompositeFieldContainer[Dof]
    mass: Matrix
    damping: Matrix
    can_checkpoint: bool
    own_clock: bool
    control_dt: float
    info: _containers.ScalarMap[str, str]
    role: Role
    def __init__(self, version: _Optional[_Union[ProtocolVersion, _Mapping]] = ..., site: _Optional[str] = ..., kind: _Optional[str] = ..., dofs: _Optional[_Iterable[_Union[Dof, _Mapping]]] = ..., mass: _Optional[_Union[Matrix, _Mapping]] = ..., damping: _Optional[_Union[Matrix, _Mapping]] = ..., can_checkpoint: _Optional[bool] = ..., own_clock: _Optional[bool] = ..., control_dt: _Optional[float] = ..., info: _Optional[_Mapping[str, str]] = ..., role: _Optional[_Union[Role, str]] = ...) -> None: ...

class OpenRequest(_message.Message):
    __slots__ = ("version", "dt", "dof_names", "run_id", "tolerance", "no_records", "iterating")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DT_FIELD_NUMBER: _ClassVar[int]
    DOF_NAMES_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TOLERANCE_FIELD_NUMBER: _ClassVar[int]
    NO_RECORDS_FIELD_NUMBER: _ClassVar[int]
    ITERATING_FIELD_NUMBER: _ClassVar[int]
    version: ProtocolVersion
    dt: float
    dof_names: _containers.RepeatedScalarFieldContainer[str]
    run_id: str
    tolerance: float
    no_records: bool
    iterating: bool
    def __init__(self, version: _Optional[_Union[ProtocolVersion, _Mapping]] = ..., dt: _Optional[float] = ..., dof_names: _Optional[_Iterable[str]] = ..., run_id: _Optional[str] = ..., tolerance: _Optional[float] = ..., no_records: _Optional[bool] = ..., iterating: _Optional[bool] = ...) -> None: ...

class OpenReply(_message.Message):
    __slots__ = ("version", "session_id")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    version: ProtocolVersion
    session_id: str
    def __init__(self, version: _Optional[_Union[ProtocolVersion, _Mapping]] = ..., session_id: _Optional[str] = ...) -> None: ...

class Command(_message.Message):
    __slots__ = ("time", "displacement", "velocity", "acceleration")
    TIME_FIELD_NUMBER: _ClassVar[int]
    DISPLACEMENT_FIELD_NUMBER: _ClassVar[int]
    VELOCITY_FIELD_NUMBER: _ClassVar[int]
    ACCELERATION_FIELD_NUMBER: _ClassVar[int]
    time: float
    displacement: _containers.RepeatedScalarFieldContainer[float]
    velocity: _containers.RepeatedScalarFieldContainer[float]
    acceleration: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, time: _Optional[float] = ..., displacement: _Optional[_Iterable[float]] = ..., velocity: _Optional[_Iterable[float]] = ..., acceleration: _Optional[_Iterable[float]] = ...) -> None: ...

class StepResult(_message.Message):
    __slots__ = ("step", "displacement", "force", "counters")
    class CountersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    STEP_FIELD_NUMBER: _ClassVar[int]
    DISPLACEMENT_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    step: int
    displacement: _containers.RepeatedScalarFieldContainer[float]
    force: _containers.RepeatedScalarFieldContainer[float]
    counters: _containers.ScalarMap[str, float]
    def __init__(self, step: _Optional[int] = ..., displacement: _Optional[_Iterable[float]] = ..., force: _Optional[_Iterable[float]] = ..., counters: _Optional[_Mapping[str, float]] = ...) -> None: ...

class ProposeRequest(_message.Message):
    __slots__ = ("session_id", "step", "command")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    step: int
    command: Command
    def __init__(self, session_id: _Optional[str] = ..., step: _Optional[int] = ..., command: _Optional[_Union[Command, _Mapping]] = ...) -> None: ...

class ProposeReply(_message.Message):
    __slots__ = ("step",)
    STEP_FIELD_NUMBER: _ClassVar[int]
    step: int
    def __init__(self, step: _Optional[int] = ...) -> None: ...

class ExecuteRequest(_message.Message):
    __slots__ = ("session_id", "step")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    step: int
    def __init__(self, session_id: _Optional[str] = ..., step: _Optional[int] = ...) -> None: ...

class ExecuteReply(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: StepResult
    def __init__(self, result: _Optional[_Union[StepResult, _Mapping]] = ...) -> None: ...

class CommitRequest(_message.Message):
    __slots__ = ("session_id", "step")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    step: int
    def __init__(self, session_id: _Optional[str] = ..., step: _Optional[int] = ...) -> None: ...

class CommitReply(_message.Message):
    __slots__ = ("step",)
    STEP_FIELD_NUMBER: _ClassVar[int]
    step: int
    def __init__(self, step: _Optional[int] = ...) -> None: ...

class StepRequest(_message.Message):
    __slots__ = ("session_id", "step", "commit_step", "command", "execute")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    COMMIT_STEP_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    EXECUTE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    step: int
    commit_step: int
    command: Command
    execute: bool
    def __init__(self, session_id: _Optional[str] = ..., step: _Optional[int] = ..., commit_step: _Optional[int] = ..., command: _Optional[_Union[Command, _Mapping]] = ..., execute: _Optional[bool] = ...) -> None: ...

class StepReply(_message.Message):
    __slots__ = ("step", "result")
    STEP_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    step: int
    result: StepResult
    def __init__(self, step: _Optional[int] = ..., result: _Optional[_Union[StepResult, _Mapping]] = ...) -> None: ...

class CheckpointRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class CheckpointReply(_message.Message):
    __slots__ = ("state",)
    STATE_FIELD_NUMBER: _ClassVar[int]
    state: bytes
    def __init__(self, state: _Optional[bytes] = ...) -> None: ...

class RestoreRequest(_message.Message):
    __slots__ = ("session_id", "state")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    state: bytes
    def __init__(self, session_id: _Optional[str] = ..., state: _Optional[bytes] = ...) -> None: ...

class RestoreReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CloseRequest(_message.Message):
    __slots__ = ("session_id", "run_completed")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    run_completed: bool
    def __init__(self, session_id: _Optional[str] = ..., run_completed: _Optional[bool] = ...) -> None: ...

class CloseReply(_message.Message):
    __slots__ = ("stats",)
    class StatsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    STATS_FIELD_NUMBER: _ClassVar[int]
    stats: _containers.ScalarMap[str, float]
    def __init__(self, stats: _Optional[_Mapping[str, float]] = ...) -> None: ...

class RecordsRequest(_message.Message):
    __slots__ = ("session_id", "since", "partial")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    since: int
    partial: bool
    def __init__(self, session_id: _Optional[str] = ..., since: _Optional[int] = ..., partial: _Optional[bool] = ...) -> None: ...

class RecordChunk(_message.Message):
    __slots__ = ("name", "columns", "units", "column_names", "description", "values", "streamed", "first_row")
    NAME_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    UNITS_FIELD_NUMBER: _ClassVar[int]
    COLUMN_NAMES_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    STREAMED_FIELD_NUMBER: _ClassVar[int]
    FIRST_ROW_FIELD_NUMBER: _ClassVar[int]
    name: str
    columns: int
    units: _containers.RepeatedScalarFieldContainer[str]
    column_names: _containers.RepeatedScalarFieldContainer[str]
    description: str
    values: _containers.RepeatedScalarFieldContainer[float]
    streamed: bool
    first_row: int
    def __init__(self, name: _Optional[str] = ..., columns: _Optional[int] = ..., units: _Optional[_Iterable[str]] = ..., column_names: _Optional[_Iterable[str]] = ..., description: _Optional[str] = ..., values: _Optional[_Iterable[float]] = ..., streamed: _Optional[bool] = ..., first_row: _Optional[int] = ...) -> None: ...

class EchoRequest(_message.Message):
    __slots__ = ("payload",)
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    def __init__(self, payload: _Optional[bytes] = ...) -> None: ...

class EchoReply(_message.Message):
    __slots__ = ("payload",)
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    def __init__(self, payload: _Optional[bytes] = ...) -> None: ...
