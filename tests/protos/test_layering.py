"""Dependencies point one way (shared/DESIGN.md): the coordinator may import the modules and the wire, the
modules import the wire, the wire imports neither.  Read from every source file's import statements (AST)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

RULES = {  # folder -> the hybridsim packages its files must not import (the package's face, api/: its
    # __init__ and __main__ reach the coordinator's API and CLI on purpose)
    "modules": ("hybridsim.coordinator",),
    "protos/hybridsim/wire": ("hybridsim.coordinator", "hybridsim.modules"),
    "protos/hybridsim/v1": ("hybridsim.coordinator", "hybridsim.modules"),
}


def imported(path: Path) -> set[str]:
    """Every module name ``path`` imports (absolute; a relative import resolved against its package folder)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path.relative_to(ROOT)}:{node.lineno}: a relative import; import hybridsim.* "
                                     "absolutely so that this scan sees it")
            names.add(node.module or "")
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_scan_sees_an_import_in_a_function_body(tmp_path: Path) -> None:
    source = tmp_path / "late.py"
    source.write_text("def f():\n    from hybridsim.coordinator import simulation\n    import hybridsim.modules.linear\n")
    assert {"hybridsim.coordinator", "hybridsim.modules.linear"} <= imported(source)


@pytest.mark.parametrize("folder", RULES)
def test_no_file_imports_a_package_it_must_not(folder: str) -> None:
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for name in sorted(imported(path)):
            if any(name == banned or name.startswith(banned + ".") for banned in RULES[folder]):
                found.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not found, f"{folder}/ must not import {' or '.join(RULES[folder])}:\n" + "\n".join(found)
