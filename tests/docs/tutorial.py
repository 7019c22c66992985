"""The blocks of docs/tutorial.md: the files it saves and the commands it types, with their outputs.

A ```` ```LANG file=NAME ```` block is saved as NAME (``append=NAME``: added to its end); a ```` ```console ````
block holds commands (``$ ...``), each followed by what it prints on standard output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial.md"


@dataclass(frozen=True)
class File:
    name: str
    text: str
    append: bool


@dataclass(frozen=True)
class Command:
    line: str
    expected: str


def tutorial_steps(text: str) -> list[File | Command]:
    """The files and commands of the tutorial, in order."""
    steps: list[File | Command] = []
    for info, body in re.findall(r"^```([^\n]*)\n(.*?)^```$", text, flags=re.M | re.S):
        words = dict(w.split("=", 1) for w in info.split()[1:] if "=" in w)
        if "file" in words or "append" in words:
            steps.append(File(words.get("file") or words["append"], body, "append" in words))
        elif info.split()[:1] == ["console"]:
            for command in re.split(r"^\$ ", body, flags=re.M)[1:]:
                line, _, expected = command.partition("\n")
                steps.append(Command(line.strip(), expected))
    return steps


def tutorial_files(folder: Path) -> None:
    """Save the files the tutorial's reader saves (not what its commands make or add to) in ``folder``."""
    for step in tutorial_steps(TUTORIAL.read_text()):
        if isinstance(step, File) and not step.append:
            (folder / step.name).write_text(step.text)
