"""Nothing but the gate holds a site's control (issue 31, "nothing else holds a reference to the backend; a lab
adding a controller cannot bypass it"), checked two ways:

- in the source: only the gate reads its ``_control`` and only the maRTHS compiled tick asks for it
  (``Gate.compiled``); a control is made (``open_control``, or the throwaway
  ``AtRest`` that primes a site) only to be handed at once to ``build_site``, which puts it behind a gate;
- in a running site: after a session's steps, the only object that holds the control is its gate (the garbage
  collector's referrers), for a virtual lab in process, a plant daemon (whose plant module only the control holds)
  and a lab's controller over ECGenericTCP (a real logging controller process), and after a compiled maRTHS run.
"""

from __future__ import annotations

import ast
import gc
import types
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.problems.marths import loop, parts
from hybridsim.coordinator.problems.marths.tick import compiled_site
from hybridsim.modules.experimental.gate import Gate
from hybridsim.modules.experimental.module import build_site
from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import Command, Session
from tests.conftest import ROOT
from tests.modules.experimental.gate.test_gate_paths import controller, site  # noqa: F401 - the fixture
from tests.modules.experimental.test_generic_site import DT, site_config

SOURCES = [ROOT / folder for folder in ("api", "coordinator", "modules", "protos/hybridsim")]
GATE = Path("modules/experimental/gate.py")
CONTROLS = Path("modules/experimental/controls")
COMPILED = Path("coordinator/problems/marths/tick.py")
"""the one compiled run of many samples that may take the control from the gate (Gate.compiled: every command
checked by the gate's own within_limits)"""
MAKERS = {"open_control", "AtRest"}
"""what makes a control outside the controls' folder"""
MOVES = {"command", "read", "reading", "set_state", "commit", "propose", "execute", "restore", "open"}
"""the verbs that move (or step) something: no bound method of these may be held beside the gate"""


def sources() -> Iterator[tuple[Path, ast.Module]]:
    """The parsed source files that name a gate's control or a maker of controls."""
    for folder in SOURCES:
        for path in sorted(folder.rglob("*.py")):
            text = path.read_text()
            if any(word in text for word in ("_control", ".compiled(", *MAKERS)):
                yield path.relative_to(ROOT), ast.parse(text, str(path))


def _name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def handed_to_build_site(call: ast.Call, function: ast.AST) -> bool:
    """Whether the control ``call`` makes goes straight into ``build_site``: as its second argument, or assigned to a
    name whose one other use in ``function`` is that."""
    calls = [c for c in ast.walk(function) if isinstance(c, ast.Call) and _name(c.func) == "build_site"]
    if any(len(c.args) > 1 and c.args[1] is call for c in calls):
        return True
    owner = next((a for a in ast.walk(function) if isinstance(a, ast.Assign) and a.value is call), None)
    if owner is None or len(owner.targets) != 1 or not isinstance(owner.targets[0], ast.Name):
        return False
    name = owner.targets[0].id
    uses = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return len(uses) == 1 and any(len(c.args) > 1 and c.args[1] is uses[0] for c in calls)


def test_only_the_gate_reads_its_control_and_every_control_made_goes_behind_a_gate() -> None:
    wrong = []
    for path, tree in sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "_control" and path != GATE:
                wrong.append(f"{path}:{node.lineno}: reads a gate's control")
            if isinstance(node, ast.Call) and _name(node.func) == "compiled" and path not in (GATE, COMPILED):
                wrong.append(f"{path}:{node.lineno}: takes a gate's control for a compiled run")
        if CONTROLS in path.parents:
            continue
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for call in ast.walk(function):
                if isinstance(call, ast.Call) and _name(call.func) in MAKERS and not handed_to_build_site(call, function):
                    wrong.append(f"{path}:{call.lineno}: a control made and not handed at once to build_site")
    assert not wrong, "\n".join(wrong)


def holders(obj: object) -> list[str]:
    """What holds ``obj`` (frames aside): each holder's type name; for a bound method of ``obj``, HOLDER.NAME for
    each holder of that method."""
    found, names = gc.get_referrers(obj), []
    for holder in found:  # plain loops: a comprehension's closure would be one more holder
        if isinstance(holder, types.MethodType):
            for outer in gc.get_referrers(holder):
                if outer is not found and not isinstance(outer, types.FrameType):
                    names.append(f"{type(outer).__name__}.{holder.__func__.__name__}")
        elif not isinstance(holder, types.FrameType):
            names.append(type(holder).__name__)
    return sorted(names)


def gate_of(module: object) -> Gate:
    gate = module.stepping.site.backend  # type: ignore[attr-defined]
    assert isinstance(gate, Gate)
    return gate


def assert_only_the_gate_holds(gate: Gate) -> None:
    """The gate, and bound methods the gate holds, are all that hold its control; what holds the plant module a
    plant daemon control steps is the control, and bound methods that move nothing (a disconnect at the close)."""
    control = gate._control
    held = holders(control)
    assert held and all(h.partition(".")[0] == "Gate" for h in held), held
    plant = getattr(control, "module", None)
    if plant is not None:
        held = holders(plant)
        assert [h for h in held if "." not in h] == [type(control).__name__], held
        assert not {h.partition(".")[2] for h in held} & MOVES, held


@pytest.mark.parametrize("backend", ["plant", "daemon"])
def test_in_a_running_site_only_the_gate_holds_the_control(backend) -> None:
    config = site_config()
    if backend == "daemon":
        config["backend"] = {"daemon": config["backend"]["plant"]}
    module = build_module("experimental", config)
    module.open(Session(DT, ("x", "theta")))
    try:
        for step in range(3):
            module.propose(step, Command(step * DT, np.array([1e-5 * step, 0.0])))
            module.execute(step)
            module.commit(step)
        assert_only_the_gate_holds(gate_of(module))
    finally:
        module.close()


def test_after_a_compiled_marths_run_only_the_gate_holds_the_control() -> None:
    spec = loop.RunSpec(duration=0.05)
    site = build_site(loop.site_config(spec), parts.lab("nominal", None, True, 123))
    assert compiled_site(site) is not None
    loop.simulate(spec, loop.InProcessSide(site))
    assert_only_the_gate_holds(site.backend)


def test_at_a_lab_s_controller_only_the_gate_holds_the_control(controller) -> None:  # noqa: F811 - the fixture
    module = site(controller[0])
    module.open(Session(0.01, ("u",)))
    try:
        module.propose(0, Command(0.0, np.zeros(1)))
        module.execute(0)
        module.commit(0)
        assert_only_the_gate_holds(gate_of(module))
    finally:
        module.close()
