"""The plant's specimen table is declared (hybridsim.modules.plant.specimen_kinds): a typo in any of its keys,
down to a spring's law keys or an attachment of an openseespy specimen, stops `hybridsim run` and `hybridsim
site plant` before anything moves, one line naming the dotted key, exit code 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hybridsim.coordinator.cli import main
from tests.conftest import EXAMPLES

SPRING = ('kind = "spring"\nlaw = "bilinear"\nstiffness = 5.0e5\nyield_displacement = 0.01\n'
          'hardening_ratio = 0.05\n')


def _none_example(tmp_path: Path, specimen: str, where: str = "backend.plant") -> Path:
    """examples/setups/none.toml in tmp_path, its site's specimen table replaced by ``specimen``, the plant at
    ``where`` (backend.plant: in the site's process; backend.daemon: a local daemon the site starts)."""
    shutil.copy(EXAMPLES / "setups" / "none.toml", tmp_path / "none.toml")
    site = (EXAMPLES / "setups" / "none_site.toml").read_text()
    site = site[:site.index("[backend.plant.specimen]")] + f"[backend.plant.specimen]\n{specimen}"
    (tmp_path / "none_site.toml").write_text(site.replace("backend.plant", where))
    return tmp_path / "none.toml"


@pytest.mark.parametrize(("where", "typo", "key"), [
    ("backend.plant", ("yield_displacement", "yield_displacment"), "backend.plant.specimen.yield_displacment"),
    ("backend.daemon", ("hardening_ratio", "hardening"), "backend.daemon.specimen.hardening"),
    ("backend.plant", ('law = "bilinear"', 'law = "bilinaer"'), "backend.plant.specimen.law"),
])
def test_a_specimen_typo_stops_the_run_naming_the_key(tmp_path, capsys, where, typo, key) -> None:
    path = _none_example(tmp_path, SPRING.replace(*typo), where)
    code = main(["run", str(path), "--quiet", "--output", str(tmp_path / "out.h5")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert key in err and "module 'structure'" not in err
    assert not (tmp_path / "out.h5").exists()


def test_a_plant_daemon_refuses_a_specimen_typo_before_it_listens(tmp_path) -> None:
    plant = {"dt": 0.005, "dofs": ["a1"], "actuators": {"model": "ideal"},
             "specimen": {"kind": "opensees", "model": "column.py", "coordinates": "attachments",
                          "attachments": [{"node": 2, "bse": [-1.2, 1.5]}]}}
    (tmp_path / "plant.json").write_text(json.dumps(plant))
    proc = subprocess.run([sys.executable, "-m", "hybridsim", "site", "plant", "--config", str(tmp_path / "plant.json"),
                           "--listen", "127.0.0.1:0"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().startswith("hybridsim site: error: unknown key specimen.attachments[0].bse in site "
                                          "'plant'"), proc.stderr


def test_describe_config_documents_every_specimen_kind(capsys) -> None:
    assert main(["site", "plant", "--describe-config"]) == 0
    out = capsys.readouterr().out
    for line in ('`kind = "linear"`: specimen \'linear\'', '`kind = "opensees"`: specimen \'opensees\'',
                 '`law = "bouc-wen"`', "| `yield_displacement` | a number > 0 (m) |",
                 "| `coordinates` | one of 'dofs', 'actuators', 'attachments' | `'dofs'` |",
                 "| `base` | a list of numbers (m) | required |"):
        assert line in out, line
