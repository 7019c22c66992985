"""One namespace, whatever the user's folder holds: the wheel installs only `hybridsim`, and `hybridsim run` with
local daemons works from a folder that has packages named `modules` and `coordinator` of its own."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import hybridsim
from tests.conftest import EXAMPLES, ROOT


def test_the_wheel_installs_one_top_level_import_name(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "results", "build", "*.egg-info",
                                                                "__pycache__", ".pytest_cache", ".hypothesis", "*.h5"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist")], cwd=source, check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("hybridsim-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")] or [None]
        declared = archive.read(top_level).decode().split() if top_level else None
    tops = {name.split("/")[0].removesuffix(".py") for name in names
            if not name.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"hybridsim"}
    assert declared in (None, ["hybridsim"])
    assert "hybridsim/wire/channels/link.py" in names and "hybridsim/coordinator/simulation.py" in names


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
