"""Shared test fixtures: paths into the repository and the package data."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
MARTHS_DATA = ROOT / "coordinator" / "data" / "marths"


@pytest.fixture
def examples() -> Path:
    return EXAMPLES
