"""The wheel, installed NON-editable into a fresh virtual environment, runs an example copied by
`hybridsim examples --copy` from an empty folder, far from the repository.

The fresh environment takes hybridsim from the wheel only; its dependencies (numpy, scipy, h5py, grpcio,
...) come from the project's environment through a path file (so nothing is downloaded and the test
stays short), which does not carry the editable install of the repository.
"""

from __future__ import annotations

import json
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES, ROOT


def test_the_installed_wheel_ships_the_examples_and_runs_one_from_an_empty_folder(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            str(ROOT), "-w", str(tmp_path / "dist")], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("hybridsim-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0].removesuffix(".py") for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"hybridsim"}  # one top-level import name: no generic `coordinator` or `modules` in site-packages
    (top_level,) = [name for name in names if name.endswith(".dist-info/top_level.txt")] or [None]
    assert top_level is None or zipfile.ZipFile(wheel).read(top_level).decode().split() == ["hybridsim"]
    assert "hybridsim/examples/sdof.toml" in names and "hybridsim/examples/marths/site.json" in names
    assert "hybridsim/coordinator/data/marths/ground_motion_elcentro.csv" in names
    assert "hybridsim/modules/opensees/models/marths_frame.py" in names
    # the package's face (api/), the wire and the generated code (protos/hybridsim/) under the one name
    assert {"hybridsim/__init__.py", "hybridsim/__main__.py", "hybridsim/registry.py", "hybridsim/shipped.py",
            "hybridsim/wire/protocols/openfresco/server.py", "hybridsim/v1/module_pb2.py",
            "hybridsim/v1/module.proto"} <= set(names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    own_site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   capture_output=True, text=True, check=True).stdout.strip())
    (own_site / "project_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                                "--no-index", str(wheel)], capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr

    empty = tmp_path / "lab"
    empty.mkdir()

    def hybridsim(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(venv / "bin" / "hybridsim"), *args], cwd=empty, capture_output=True, text=True,
                              timeout=300)

    where = subprocess.run([str(python), "-c", "import hybridsim.coordinator as c; print(c.__file__)"], cwd=empty,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(own_site)), where  # the wheel's copy, not the repository's
    copied = hybridsim("examples", "--copy", "examples")
    assert copied.returncode == 0, copied.stderr
    assert (empty / "examples" / "sdof.toml").is_file() and (empty / "examples" / "marths" / "numerical_K.csv").is_file()
    listed = hybridsim("examples")
    assert "sdof.toml" in listed.stdout and "shear_building.toml" in listed.stdout

    ran = hybridsim("run", "examples/sdof.toml", "--json")
    assert ran.returncode == 0, ran.stderr
    summary = json.loads(ran.stdout)
    assert (empty / "results" / "sdof.h5").is_file() and summary["steps"] > 1000
    # the same peak as the example run from the repository (the wheel's data and code are the same)
    reference = run_experiment(load_experiment(EXAMPLES / "sdof.toml"), output=tmp_path / "reference.h5")
    np.testing.assert_allclose(summary["peak_displacement"]["x"], np.max(np.abs(reference["x"])), rtol=1e-12)
