"""Every registry walked: each entry resolves, declares its configuration where its family has one, and is named
in docs/config_reference.md and (its source file) in docs/architecture.md.

A family added to the code is added here once (:data:`FAMILIES`); a member added to a family is then checked
without anything written here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import pytest

from hybridsim.coordinator.campaign.subjects import SUBJECTS
from hybridsim.coordinator.cli import SUBCOMMANDS
from hybridsim.coordinator.integrators import INTEGRATORS, tangent
from hybridsim.coordinator.problems import PROBLEMS, evaluating
from hybridsim.coordinator.problems.executors import EXECUTORS
from hybridsim.coordinator.problems.integrators.schemes import SCHEMES
from hybridsim.coordinator.stages import STAGES
from hybridsim.modules.config_schema import Key, Schema
from hybridsim.modules.experimental.compensators.kinds import KINDS as COMPENSATORS
from hybridsim.modules.experimental.controls import CONTROLS
from hybridsim.modules.experimental.setups.kinds import KINDS as SETUPS
from hybridsim.modules.plant.channels import MODELS
from hybridsim.modules.plant.specimen_kinds import KINDS as SPECIMENS
from hybridsim.modules.registry import KINDS, module_schema
from hybridsim.modules.spring import LAWS
from hybridsim.registry import resolve
from hybridsim.wire.channels import CHANNELS, Transport
from hybridsim.wire.protocols import PROTOCOLS
from hybridsim.wire.starters import STARTERS
from tests.conftest import ROOT

REFERENCE = (ROOT / "docs" / "config_reference.md").read_text()
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()


@dataclass(frozen=True)
class Family:
    """A registry: how an entry resolves, what declares its configuration, how the reference names it."""

    table: Mapping[str, Any]
    resolve: Callable[[str, Any], Any] = lambda name, line: resolve(line)
    declares: Callable[[str, Any], bool] | None = None
    """whether the resolved entry declares its configuration (None: the family has no configuration)"""
    named: Callable[[str], str] | None = None
    """the text that names the entry in docs/config_reference.md (None: the reference does not list the family)"""


def schema_of(name: str, cls: Any) -> bool:
    return isinstance(getattr(cls, "CONFIG", None), Schema)


def variant(key: str) -> Callable[[str], str]:
    return lambda name: f'`{key} = "{name}"`'


FAMILIES = {
    "module kinds": Family(KINDS, declares=lambda name, cls: isinstance(module_schema(name), Schema),
                           named=lambda name: f"## `{name}` module"),
    "controls": Family(CONTROLS, declares=lambda name, cls: isinstance(getattr(cls, "KEY", None), Key),
                       named=lambda name: f"| `{name}` |"),
    "setups": Family(SETUPS, declares=schema_of, named=variant("kind")),
    "compensators": Family(COMPENSATORS, declares=schema_of, named=variant("kind")),
    "specimen kinds": Family(SPECIMENS, declares=schema_of, named=variant("kind")),
    "spring laws": Family(LAWS, resolve=lambda name, schema: schema, declares=lambda name, s: isinstance(s, Schema),
                          named=variant("law")),
    "actuator models": Family(MODELS, resolve=lambda name, model: model, named=variant("model")),
    "integrators": Family(INTEGRATORS, declares=schema_of, named=variant("kind")),
    "stages": Family(STAGES, declares=schema_of, named=variant("kind")),
    "tangent updates": Family(dict.fromkeys(tangent.METHODS), resolve=lambda name, _: tangent,
                              named=lambda name: f"'{name}'"),
    "integrators study schemes": Family(SCHEMES, resolve=lambda name, scheme: type(scheme)),
    "channels": Family(CHANNELS, resolve=lambda name, cls: cls, declares=lambda name, cls: name in get_args(Transport),
                       named=lambda name: f"'{name}'"),
    "starters": Family(STARTERS, resolve=lambda name, starter: starter),
    "protocols": Family(PROTOCOLS, resolve=lambda name, protocol: resolve(protocol.server),
                        declares=lambda name, server: PROTOCOLS[name].client in KINDS,
                        named=lambda name: f"## `{PROTOCOLS[name].client}` module"),
    "problems": Family(PROBLEMS, declares=lambda name, cls: callable(getattr(cls, "arguments", None))),
    "campaign executors": Family(EXECUTORS, resolve=lambda name, executor: executor),
    "campaign subjects": Family(SUBJECTS, named=lambda name: f"'{name}'"),
    "CLI subcommands": Family(SUBCOMMANDS, resolve=lambda name, entry: resolve(entry[0])),
}


def entries() -> Iterator[tuple[str, str]]:
    for family, spec in FAMILIES.items():
        for name in spec.table:
            yield family, name


def source_file(obj: Any) -> Path:
    """The repository-relative file that defines ``obj``."""
    return Path(inspect.getsourcefile(obj)).resolve().relative_to(ROOT)


@pytest.mark.parametrize(("family", "name"), list(entries()), ids=lambda value: str(value))
def test_entry_resolves_declares_its_config_and_is_documented(family: str, name: str) -> None:
    spec = FAMILIES[family]
    entry = spec.resolve(name, spec.table[name])
    assert entry is not None
    if spec.declares is not None:
        assert spec.declares(name, entry), f"{family}: {name!r} declares no configuration"
    if spec.named is not None:
        assert spec.named(name) in REFERENCE, (f"{family}: {name!r} is not in docs/config_reference.md "
                                               "(python -m hybridsim.coordinator.reference > docs/config_reference.md)")
    if not isinstance(entry, Schema):
        where = source_file(entry).as_posix()
        assert f"`{where}`" in ARCHITECTURE, (f"{family}: {name!r} ({where}) is not in docs/architecture.md "
                                              "(python -m tests.test_architecture)")


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_has_its_recipe_in_the_architecture_page(family: str) -> None:
    """The "Adding a thing" table names each family's registry (the table's attribute name)."""
    table = FAMILIES[family].table
    names = {"module kinds": "KINDS", "controls": "CONTROLS", "setups": "KINDS", "compensators": "KINDS",
             "specimen kinds": "KINDS", "spring laws": "LAWS", "actuator models": "MODELS",
             "integrators": "INTEGRATORS", "stages": "STAGES", "tangent updates": "METHODS", "integrators study schemes": "SCHEMES",
             "channels": "CHANNELS", "starters": "STARTERS", "protocols": "PROTOCOLS",
             "problems": "PROBLEMS", "campaign executors": "EXECUTORS",
             "campaign subjects": "SUBJECTS", "CLI subcommands": "SUBCOMMANDS"}
    recipes = ARCHITECTURE[ARCHITECTURE.index("## Adding a thing"):ARCHITECTURE.index("## The experimental site")]
    assert f": {names[family]}`" in recipes or f"`{names[family]}`" in recipes, f"no recipe names {family}"
    assert table, f"{family}: an empty registry"


def test_every_problem_that_evaluates_a_run_is_in_the_evaluation_reference() -> None:
    evaluation = REFERENCE[REFERENCE.index("## [evaluation]"):]
    for name in evaluating():
        assert f"`{name}`" in evaluation, f"[evaluation] problem = {name!r} is not in docs/config_reference.md"

