"""The README's table of the `hybridsim` command has a row for every subcommand `hybridsim --help` lists."""

from __future__ import annotations

import re

from hybridsim.coordinator.cli import SUBCOMMANDS
from tests.conftest import ROOT


def test_every_subcommand_has_a_row_in_the_readme_s_command_table():
    table = (ROOT / "README.md").read_text().split("## The `hybridsim` command", 1)[1].split("\n## ", 1)[0]
    first_cells = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    named = {name for cell in first_cells for name in re.findall(r"`([a-z][a-z-]*)[ `]", cell)}
    assert set(SUBCOMMANDS) - named == set()
