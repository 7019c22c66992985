"""A new control is one file and one registry line: a toy lab written in a temporary package, registered in
``CONTROLS`` and run as an experimental site's control in a hybrid test.  Its actuators reach every command at
the end of the sample and its load cell is a linear spring, so the site is the `linear` module of that spring
(the equivalence of tests/modules/experimental/test_site_equivalence.py, here through the new control)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from hybridsim.modules.experimental.controls import CONTROLS
from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import Command, ModuleError, Session
from tests.modules.experimental.test_site_equivalence import difference, pulse, run

TOY = '''
"""A toy lab: ideal actuators and a spring of ``stiffness`` (N/m) on each load cell."""

import numpy as np

from hybridsim.modules.config_schema import Key, Number, Schema, Table

CONFIG = Schema("toy lab", "Ideal actuators, a spring on each load cell.", {
    "stiffness": Key(Number("N/m", 0, open_minimum=True), "each spring", required=True),
    "channels": Key(Number("", 1), "actuators", default=1)})


class ToyLab:
    KEY = Key(Table(CONFIG), "a toy lab in this process")
    PROBES = True
    CHECKPOINT_REFUSAL = None

    def __init__(self, stiffness, channels):
        self.stiffness = stiffness
        self.strokes = np.zeros(channels)
        self.commands = 0

    @classmethod
    def open(cls, table, context):
        return cls(float(table["toy"]["stiffness"]), int(table["toy"].get("channels", 1)))

    def read(self):
        return self.strokes.copy(), self.stiffness * self.strokes

    def command(self, strokes):
        self.commands += 1
        self.strokes = np.array(strokes, float)
        return self.read()

    def probe(self, strokes):
        return self.stiffness * np.asarray(strokes, float)

    def commit(self):
        pass

    def state(self):
        return self.strokes.tolist()

    def set_state(self, state):
        self.strokes = np.array(state, float)

    def close(self):
        return {"toy_commands": float(self.commands)}
'''
STIFFNESS = 3.0e5
"""N/m: the toy lab's spring"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The toy control's one file (in a package of its own) and its one registry line."""
    package = tmp_path / "toylab"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "spring_rig.py").write_text(textwrap.dedent(TOY))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(CONTROLS, "toy", "toylab.spring_rig:ToyLab")
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("toylab")]:
        del sys.modules[name]


def site(dt: float) -> dict:
    return {"dt": dt, "setup": {"kind": "one-actuator", "dof": "u"}, "actuators": [{}],
            "backend": {"toy": {"stiffness": STIFFNESS}}}


def test_a_hybrid_run_through_a_new_control_is_the_linear_module(toy: Path) -> None:
    dt = 0.002
    pulse(toy, dt, 2.0, 3.0, 1.5, 1.0)
    numerical = run(toy, ["u"], ["translation"], {"kind": "linear", "config": {"dofs": ["u"],
                                                                              "stiffness": [[STIFFNESS]]}}, dt, "linear")
    hybrid = run(toy, ["u"], ["translation"], {"kind": "experimental", "config": site(dt)}, dt, "site")
    assert np.max(np.abs(numerical.displacement)) > 1e-3  # the toy rig moves by millimetres
    assert max(difference(hybrid, numerical)) <= 1e-12  # the same arithmetic (k u) on both sides: round-off
    assert hybrid.summary["modules"]["specimen"]["toy_commands"] == len(hybrid.time) - 1  # one per step after rest


def test_the_new_control_is_a_key_of_the_backend_table_and_validated_by_its_declaration(toy: Path) -> None:
    module = build_module("experimental", site(0.01))
    module.open(Session(0.01, ("u",)))
    module.propose(0, Command(0.0, np.zeros(1)))
    module.execute(0)
    module.commit(0)
    module.propose(1, Command(0.01, np.array([2e-3])))
    assert module.execute(1).force == pytest.approx([STIFFNESS * 2e-3], rel=1e-15)
    module.close()
    with pytest.raises(ModuleError, match="backend.toy.stiffness"):
        build_module("experimental", {**site(0.01), "backend": {"toy": {"stiffness": -1.0}}})
    with pytest.raises(ModuleError, match="give exactly one of plant or address or daemon or generic_tcp or toy"):
        build_module("experimental", {**site(0.01), "backend": {"toy": {"stiffness": 1.0}, "address": "h:1"}})
