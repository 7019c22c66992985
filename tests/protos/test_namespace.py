"""One namespace, whatever the user's folder holds: `hybridsim run` with local daemons works from a folder that has
packages named `modules` and `coordinator` of its own (tests/test_wheel.py: the wheel installs only `hybridsim`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import hybridsim
from tests.conftest import EXAMPLES, ROOT


@pytest.fixture
def hostile_folder(tmp_path: Path) -> Path:
    """A working folder with packages `modules` and `coordinator` that refuse to be imported."""
    for name in ("modules", "coordinator"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('the user\\'s own {name} package was imported')\n")
    return tmp_path


def test_hybridsim_run_with_local_daemons_works_from_a_folder_with_its_own_modules_and_coordinator(hostile_folder):
    text = (EXAMPLES / "sdof.toml").read_text().replace("../coordinator", str(ROOT / "coordinator"))
    text = text.replace('kind = "linear"\n', 'kind = "linear"\naddress = "local"\n')
    (hostile_folder / "sdof_local.toml").write_text(text)
    run = subprocess.run([sys.executable, "-m", "hybridsim", "run", "sdof_local.toml", "--json", "--output", "out.h5"],
                         cwd=hostile_folder, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["modules"]["column"]["executed"] > summary["steps"] == 4118
    in_process = hybridsim.run(hybridsim.load_experiment(EXAMPLES / "sdof.toml"), output=hostile_folder / "ref.h5")
    assert summary["peak_displacement"]["x"] == pytest.approx(in_process.summary["peak_displacement"]["x"],
                                                              rel=1e-12, abs=0)
