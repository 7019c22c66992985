"""The control's protocol and what its ``open`` is given (see :mod:`hybridsim.modules.experimental.controls`)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np

from hybridsim.modules.config_schema import Key


@dataclass(frozen=True)
class OpenContext:
    """What a control's ``open`` may use besides its table."""

    sample_period: float
    """dt: the site's control sample (s)"""
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    """stops what ``open`` started (a daemon, a connection) at the site's close"""
    base_dir: Path | None = None
    setup: Mapping[str, Any] | None = None
    """the site's setup table (a specimen in DOF coordinates without one takes it)"""
    records: bool = True
    """the control keeps its own log (a plant daemon's DAQ log)"""
    samples: int = 1
    """control samples per step"""
    iterating: bool = False
    """the coordinator takes trials back"""
    actuators: int | None = None
    """the site's actuators (a control that learns its lab's channels only when it connects checks them)"""


class Control(Protocol):
    """The verbs of a control (see the module's docstring)."""

    KEY: ClassVar[Key]

    @classmethod
    def open(cls, table: Mapping[str, Any], context: OpenContext) -> Control: ...

    def read(self) -> tuple[np.ndarray, np.ndarray]: ...

    def command(self, strokes: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def commit(self) -> None: ...

    def state(self) -> Any: ...

    def set_state(self, state: Any) -> None: ...

    def close(self) -> dict[str, float]: ...
