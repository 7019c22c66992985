"""Shared test fixtures: paths into the repository and the package data."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
MARTHS_DATA = ROOT / "coordinator" / "data" / "marths"


@pytest.fixture(autouse=True, scope="session")
def _site_state_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Path-dependent OpenSees sites keep their committed paths under $XDG_STATE_HOME
    (modules/opensees/path.py): the tests' sites and daemons keep theirs out of the user's home."""
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("xdg-state"))


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (just now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The container tests (a third of the suite's time, in one file) first: run on parallel workers
    (`-n 2 --dist loadfile`, the README's command), the other files then fill the second worker beside them
    instead of leaving one worker alone with them at the end.  A stable sort: each file keeps its order."""
    items.sort(key=lambda item: item.get_closest_marker("containers") is None)
