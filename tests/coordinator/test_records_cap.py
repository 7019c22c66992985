"""A module that would stream more records than the results file is measured to hold for one module (issue 32's
limits) is refused in one line naming the module, the count, the cap and the fix, exit code 2, before the pre-test
moves it and before a results file exists.  The measurement: `python benchmarks/writer_records.py`."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.config_text import MAX_RECORDS
from hybridsim.modules.config_schema import Integer, Key
from hybridsim.modules.registry import KINDS
from hybridsim.modules.spring import SpringModule
from hybridsim.wire.contract import Record
from tests.conftest import MARTHS_DATA
from tests.coordinator.test_resume_after_coordinator_crash import _toml


class RecordingSpring(SpringModule):
    """A linear spring that streams ``streams`` one-column records (a lab logging that many signals)."""

    CONFIG = SpringModule.CONFIG.with_keys("recording", "a spring that logs many signals", {
        "streams": Key(Integer(), "how many records it streams", required=True)})
    steps = 0
    """steps executed by any instance (the refusal comes before the first)"""

    @classmethod
    def from_config(cls, config):
        module = super().from_config({k: v for k, v in config.items() if k != "streams"})
        module.streams = config["streams"]
        return module

    def execute(self, step):
        RecordingSpring.steps += 1
        return super().execute(step)

    def records(self, since: int = 0, final: bool = True) -> list[Record]:
        return [Record(f"signal{i}", np.zeros((0, 1)), ("m",), ("value",), first_row=since)
                for i in range(self.streams)]


@pytest.fixture
def recording_kind(monkeypatch):
    monkeypatch.setitem(KINDS, "recording", f"{__name__}:RecordingSpring")


def test_a_module_streaming_one_record_past_the_cap_is_refused_before_anything_moves(tmp_path, recording_kind,
                                                                                      capsys):
    config = tmp_path / "logged.toml"
    config.write_text(_toml({
        "experiment": {"name": "logged", "dt": 0.01, "duration": 0.1},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0]},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv")},
        "modules": [{"name": "lab", "kind": "recording",
                     "config": {"dofs": ["x"], "stiffness": 4.0e5, "streams": MAX_RECORDS + 1}}],
        "output": {"file": str(tmp_path / "logged.h5")},
    }))
    RecordingSpring.steps = 0
    assert main(["run", str(config), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err], err
    assert (f"module 'lab': {MAX_RECORDS + 1} streamed records, more than the {MAX_RECORDS} a results file is "
            "measured to hold for one module; record fewer signals in the module, or set output.records = false") in err
    assert RecordingSpring.steps == 0 and not (tmp_path / "logged.h5").exists()
