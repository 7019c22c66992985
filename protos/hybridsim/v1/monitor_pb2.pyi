from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WatchRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MonitorEvent(_message.Message):
    __slots__ = ("info", "frame")
    INFO_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    info: RunInfo
    frame: Frame
    def __init__(self, info: _Optional[_Union[RunInfo, _Mapping]] = ..., frame: _Optional[_Union[Frame, _Mapping]] = ...) -> None: ...

class RunInfo(_message.Message):
    __slots__ = ("experiment", "integrator", "dt_s", "total_steps", "decimation", "response_dofs", "modules", "step_time_edges_s", "realtime", "indicators")
    EXPERIMENT_FIELD_NUMBER: _ClassVar[int]
    INTEGRATOR_FIELD_NUMBER: _ClassVar[int]
    DT_S_FIELD_NUMBER: _ClassVar[int]
    TOTAL_STEPS_FIELD_NUMBER: _ClassVar[int]
    DECIMATION_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_DOFS_FIELD_NUMBER: _ClassVar[int]
    MODULES_FIELD_NUMBER: _ClassVar[int]
    STEP_TIME_EDGES_S_FIELD_NUMBER: _ClassVar[int]
    REALTIME_FIELD_NUMBER: _ClassVar[int]
    INDICATORS_FIELD_NUMBER: _ClassVar[int]
    experiment: str
    integrator: str
    dt_s: float
    total_steps: int
    decimation: int
    response_dofs: _containers.RepeatedScalarFieldContainer[str]
    modules: _containers.RepeatedCompositeFieldContainer[ModuleInfo]
    step_time_edges_s: _containers.RepeatedScalarFieldContainer[float]
    realtime: bool
    indicators: _containers.RepeatedCompositeFieldContainer[Indicator]
    def __init__(self, experiment: _Optional[str] = ..., integrator: _Optional[str] = ..., dt_s: _Optional[float] = ..., total_steps: _Optional[int] = ..., decimation: _Optional[int] = ..., response_dofs: _Optional[_Iterable[str]] = ..., modules: _Optional[_Iterable[_Union[ModuleInfo, _Mapping]]] = ..., step_time_edges_s: _Optional[_Iterable[float]] = ..., realtime: _Optional[bool] = ..., indicators: _Optional[_Iterable[_Union[Indicator, _Mapping]]] = ...) -> None: ...

class Indicator(_message.Message):
    __slots__ = ("dataset", "module", "indicator", "columns", "unit", "threshold", "action")
    DATASET_FIELD_NUMBER: _ClassVar[int]
    MODULE_FIELD_NUMBER: _ClassVar[int]
    INDICATOR_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    dataset: str
    module: str
    indicator: str
    columns: _containers.RepeatedScalarFieldContainer[str]
    unit: str
    threshold: float
    action: str
    def __init__(self, dataset: _Optional[str] = ..., module: _Optional[str] = ..., indicator: _Optional[str] = ..., columns: _Optional[_Iterable[str]] = ..., unit: _Optional[str] = ..., threshold: _Optional[float] = ..., action: _Optional[str] = ...) -> None: ...

class ModuleInfo(_message.Message):
    __slots__ = ("name", "dofs", "where", "displacement_limit", "force_limit", "has_command", "kind", "actuated")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DOFS_FIELD_NUMBER: _ClassVar[int]
    WHERE_FIELD_NUMBER: _ClassVar[int]
    DISPLACEMENT_LIMIT_FIELD_NUMBER: _ClassVar[int]
    FORCE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    HAS_COMMAND_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ACTUATED_FIELD_NUMBER: _ClassVar[int]
    name: str
    dofs: _containers.RepeatedScalarFieldContainer[str]
    where: str
    displacement_limit: _containers.RepeatedScalarFieldContainer[float]
    force_limit: _containers.RepeatedScalarFieldContainer[float]
    has_command: bool
    kind: str
    actuated: bool
    def __init__(self, name: _Optional[str] = ..., dofs: _Optional[_Iterable[str]] = ..., where: _Optional[str] = ..., displacement_limit: _Optional[_Iterable[float]] = ..., force_limit: _Optional[_Iterable[float]] = ..., has_command: _Optional[bool] = ..., kind: _Optional[str] = ..., actuated: _Optional[bool] = ...) -> None: ...

class Frame(_message.Message):
    __slots__ = ("step", "time_s", "wall_step_s", "ground_acceleration", "response", "command", "measured", "force", "progress", "indicators")
    STEP_FIELD_NUMBER: _ClassVar[int]
    TIME_S_FIELD_NUMBER: _ClassVar[int]
    WALL_STEP_S_FIELD_NUMBER: _ClassVar[int]
    GROUND_ACCELERATION_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    MEASURED_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    INDICATORS_FIELD_NUMBER: _ClassVar[int]
    step: _containers.RepeatedScalarFieldContainer[int]
    time_s: _containers.RepeatedScalarFieldContainer[float]
    wall_step_s: _containers.RepeatedScalarFieldContainer[float]
    ground_acceleration: _containers.RepeatedScalarFieldContainer[float]
    response: _containers.RepeatedScalarFieldContainer[float]
    command: _containers.RepeatedScalarFieldContainer[float]
    measured: _containers.RepeatedScalarFieldContainer[float]
    force: _containers.RepeatedScalarFieldContainer[float]
    progress: Progress
    indicators: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, step: _Optional[_Iterable[int]] = ..., time_s: _Optional[_Iterable[float]] = ..., wall_step_s: _Optional[_Iterable[float]] = ..., ground_acceleration: _Optional[_Iterable[float]] = ..., response: _Optional[_Iterable[float]] = ..., command: _Optional[_Iterable[float]] = ..., measured: _Optional[_Iterable[float]] = ..., force: _Optional[_Iterable[float]] = ..., progress: _Optional[_Union[Progress, _Mapping]] = ..., indicators: _Optional[_Iterable[float]] = ...) -> None: ...

class Progress(_message.Message):
    __slots__ = ("step", "time_s", "total_steps", "state", "late_steps", "max_wall_step_s", "mean_wall_step_s", "elapsed_s", "eta_s", "dropped_frames", "step_time_counts", "displacement_margin", "force_margin", "counters", "crossings")
    STEP_FIELD_NUMBER: _ClassVar[int]
    TIME_S_FIELD_NUMBER: _ClassVar[int]
    TOTAL_STEPS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    LATE_STEPS_FIELD_NUMBER: _ClassVar[int]
    MAX_WALL_STEP_S_FIELD_NUMBER: _ClassVar[int]
    MEAN_WALL_STEP_S_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_S_FIELD_NUMBER: _ClassVar[int]
    ETA_S_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FRAMES_FIELD_NUMBER: _ClassVar[int]
    STEP_TIME_COUNTS_FIELD_NUMBER: _ClassVar[int]
    DISPLACEMENT_MARGIN_FIELD_NUMBER: _ClassVar[int]
    FORCE_MARGIN_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    CROSSINGS_FIELD_NUMBER: _ClassVar[int]
    step: int
    time_s: float
    total_steps: int
    state: str
    late_steps: int
    max_wall_step_s: float
    mean_wall_step_s: float
    elapsed_s: float
    eta_s: float
    dropped_frames: int
    step_time_counts: _containers.RepeatedScalarFieldContainer[int]
    displacement_margin: _containers.RepeatedScalarFieldContainer[float]
    force_margin: _containers.RepeatedScalarFieldContainer[float]
    counters: _containers.RepeatedCompositeFieldContainer[ModuleCounters]
    crossings: _containers.RepeatedCompositeFieldContainer[Crossing]
    def __init__(self, step: _Optional[int] = ..., time_s: _Optional[float] = ..., total_steps: _Optional[int] = ..., state: _Optional[str] = ..., late_steps: _Optional[int] = ..., max_wall_step_s: _Optional[float] = ..., mean_wall_step_s: _Optional[float] = ..., elapsed_s: _Optional[float] = ..., eta_s: _Optional[float] = ..., dropped_frames: _Optional[int] = ..., step_time_counts: _Optional[_Iterable[int]] = ..., displacement_margin: _Optional[_Iterable[float]] = ..., force_margin: _Optional[_Iterable[float]] = ..., counters: _Optional[_Iterable[_Union[ModuleCounters, _Mapping]]] = ..., crossings: _Optional[_Iterable[_Union[Crossing, _Mapping]]] = ...) -> None: ...

class Crossing(_message.Message):
    __slots__ = ("module", "indicator", "value", "threshold", "step", "time_s", "action")
    MODULE_FIELD_NUMBER: _ClassVar[int]
    INDICATOR_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TIME_S_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    module: str
    indicator: str
    value: float
    threshold: float
    step: int
    time_s: float
    action: str
    def __init__(self, module: _Optional[str] = ..., indicator: _Optional[str] = ..., value: _Optional[float] = ..., threshold: _Optional[float] = ..., step: _Optional[int] = ..., time_s: _Optional[float] = ..., action: _Optional[str] = ...) -> None: ...

class ModuleCounters(_message.Message):
    __slots__ = ("module", "values")
    class ValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    MODULE_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    module: str
    values: _containers.ScalarMap[str, float]
    def __init__(self, module: _Optional[str] = ..., values: _Optional[_Mapping[str, float]] = ...) -> None: ...

class ControlRequest(_message.Message):
    __slots__ = ("token",)
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: str
    def __init__(self, token: _Optional[str] = ...) -> None: ...

class ControlReply(_message.Message):
    __slots__ = ("state", "step")
    STATE_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    state: str
    step: int
    def __init__(self, state: _Optional[str] = ..., step: _Optional[int] = ...) -> None: ...
