"""The README's table of the `hybridsim` command: a row for every subcommand `hybridsim --help` lists, naming the
arguments as each subcommand's usage does."""

from __future__ import annotations

import re

import pytest

from hybridsim.coordinator.cli import SUBCOMMANDS
from tests.conftest import ROOT


def test_every_subcommand_has_a_row_in_the_readme_s_command_table():
    table = (ROOT / "README.md").read_text().split("## The `hybridsim` command", 1)[1].split("\n## ", 1)[0]
    first_cells = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    named = {name for cell in first_cells for name in re.findall(r"`([a-z][a-z-]*)[ `]", cell)}
    assert set(SUBCOMMANDS) - named == set()


@pytest.mark.parametrize("command, words", [("run", ["EXPERIMENT.toml", "--output FILE.h5"]),
                                            ("site", ["KIND", "--config SITE.toml", "--listen HOST:PORT"])])
def test_the_help_s_usage_names_the_arguments_as_the_readme_does(command, words):
    from hybridsim.coordinator.cli import build_parser

    usage = " ".join(build_parser(command)._subparsers._group_actions[0].choices[command].format_usage().split())
    row = (ROOT / "README.md").read_text().split(f"| `{command} ", 1)[1].split("`", 1)[0]
    assert [w for w in words if w in usage and w in row] == words, (usage, row)
