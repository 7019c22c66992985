"""A typo anywhere in a module's configuration stops `hybridsim run` and `hybridsim site` before anything moves:
one line naming the dotted key, the module and the file, exit code 2 (issue 15 item 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.reference import main as reference_page
from tests.conftest import EXAMPLES, ROOT

SDOF = (EXAMPLES / "sdof.toml").read_text().replace("../coordinator", str(ROOT / "coordinator"))
LIMIT = "displacement = 0.001"
"""a roof limit the sdof run at 40 % El Centro crosses (its peak is about 0.03 m)"""


def _sdof_with_module(tmp_path: Path, module: str, config: str) -> Path:
    """The sdof experiment whose module reads ``config`` from column.toml (``module``: the [[modules]] lines)."""
    (tmp_path / "column.toml").write_text(config)
    text = SDOF.replace('config = { dofs = ["x"], stiffness = [[39478.417604357434]] }', module)
    path = tmp_path / "experiment.toml"
    path.write_text(text)
    return path


def _run(capsys, path: Path, tmp_path: Path) -> tuple[int, str]:
    code = main(["run", str(path), "--quiet", "--output", str(tmp_path / "out.h5")])
    return code, capsys.readouterr().err.strip()


LINEAR = 'dofs = ["x"]\nstiffness = [[39478.417604357434]]\n'


@pytest.mark.parametrize("address", ["", 'address = "local"\n'])
def test_a_limit_typo_is_refused_and_the_same_limit_spelled_right_stops_the_run(tmp_path, capsys, address):
    module = f'config_file = "column.toml"\n{address}'
    code, err = _run(capsys, _sdof_with_module(tmp_path, module, LINEAR + f"[limits]\ndisplacment = 0.001\n"), tmp_path)
    assert code == 2 and len(err.splitlines()) == 1
    assert ("unknown key limits.displacment in module 'column' (config column.toml); allowed: confirm_first, "
            "displacement, force, force_stiffness, increment, velocity") in err
    assert not (tmp_path / "out.h5").exists()
    code, err = _run(capsys, _sdof_with_module(tmp_path, module, LINEAR + f"[limits]\n{LIMIT}\n"), tmp_path)
    assert code == 1 and "displacement limit on DOF 'x'" in err


def test_a_misspelt_limits_table_is_refused(tmp_path, capsys):
    code, err = _run(capsys, _sdof_with_module(tmp_path, 'config_file = "column.toml"\n',
                                               LINEAR + f"[limts]\n{LIMIT}\n"), tmp_path)
    assert code == 2 and "unknown key limts in module 'column' (config column.toml)" in err


def test_a_spring_typo_in_a_local_daemon_is_refused_before_it_starts(tmp_path, capsys):
    spring = ('law = "bilinear"\ndofs = ["x"]\nstiffness = 39478.4\nyield_displacement = 0.01\n'
              'hardenig_ratio = 0.05\n')
    path = _sdof_with_module(tmp_path, 'kind = "spring"\nconfig_file = "column.toml"\naddress = "local"\n', spring)
    path.write_text(path.read_text().replace('kind = "linear"\nkind = "spring"', 'kind = "spring"'))
    code, err = _run(capsys, path, tmp_path)
    assert code == 2 and len(err.splitlines()) == 1
    assert "unknown key hardenig_ratio in module 'column' (config column.toml); allowed: dofs, hardening_ratio" in err


def _marths_with(tmp_path: Path, edit) -> Path:
    """examples/marths.toml in tmp_path with its site.json edited by ``edit`` (a function of the table)."""
    (tmp_path / "marths").mkdir()
    for name in ("numerical.toml", "numerical_K.csv", "numerical_M.csv", "numerical_C.csv"):
        (tmp_path / "marths" / name).write_bytes((EXAMPLES / "marths" / name).read_bytes())
    site = json.loads((EXAMPLES / "marths" / "site.json").read_text())
    edit(site)
    (tmp_path / "marths" / "site.json").write_text(json.dumps(site))
    text = (EXAMPLES / "marths.toml").read_text().replace("../coordinator", str(ROOT / "coordinator"))
    path = tmp_path / "marths.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("key", "edit"), [
    ("backend.daemon.noise.sigam", lambda site: site["backend"]["daemon"]["noise"].update(sigam=0.1)),
    ("compensators[1].forgeting", lambda site: site["compensators"][1].update(forgeting=0.99)),
    ("frame.beam_lenght", lambda site: site["frame"].update(beam_lenght=0.762)),
    ("guards[0].vlots", lambda site: site["guards"][0].update(vlots=3.8)),
])
def test_an_experimental_site_typo_is_refused_naming_the_key_and_file(tmp_path, capsys, key, edit):
    code, err = _run(capsys, _marths_with(tmp_path, edit), tmp_path)
    assert code == 2 and len(err.splitlines()) == 1
    assert f"unknown key {key} in module 'lab' (config marths/site.json); allowed: " in err


def _site(tmp_path: Path, kind: str, name: str, table: dict) -> subprocess.CompletedProcess:
    config = tmp_path / name
    config.write_text(json.dumps(table))
    return subprocess.run([sys.executable, "-m", "hybridsim", "site", kind, "--config", str(config),
                           "--listen", "127.0.0.1:0"], capture_output=True, text=True, timeout=60)


def test_a_site_daemon_refuses_a_typo_with_one_line(tmp_path):
    plant = json.loads((ROOT / "deploy" / "marths" / "plant.json").read_text())
    plant["noise"]["sigam"] = plant["noise"].pop("sigma")
    proc = _site(tmp_path, "plant", "plant.json", plant)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (f"hybridsim site: error: unknown key noise.sigam in site 'plant' (config "
                                   f"{tmp_path / 'plant.json'}); allowed: drift, limit, quantum, seed, shared, sigma; "
                                   "did you mean sigma?")
    lab = json.loads((ROOT / "deploy" / "marths" / "lab.json").read_text())
    lab["coupler"]["height"] = lab["coupler"].pop("heights")
    proc = _site(tmp_path, "experimental", "lab.json", lab)
    assert proc.returncode == 2
    assert proc.stderr.startswith("hybridsim site: error: unknown key coupler.height in site 'lab'")
    assert len(proc.stderr.splitlines()) == 1


def test_describe_config_documents_a_kind(capsys):
    assert main(["site", "spring", "--describe-config"]) == 0
    out = capsys.readouterr().out
    assert "| `hardening_ratio` | a number >= 0 and < 1 | `0.0` | post-yield stiffness / k |" in out
    assert "| `displacement` | a number or a list of numbers, each >= 0 (m or rad) |" in out


def test_the_reference_page_is_generated_from_the_declarations(capsys):
    reference_page()
    assert (ROOT / "docs" / "config_reference.md").read_text() == capsys.readouterr().out


def test_checkpoints_with_a_backend_that_keeps_none_are_refused_before_anything_starts(tmp_path, capsys):
    path = _marths_with(tmp_path, lambda site: site.update(backend={"generic_tcp": "127.0.0.1:1", "channels": 2}))
    path.write_text(path.read_text().replace("[output]", "[output]\ncheckpoint_every = 100"))
    code, err = _run(capsys, path, tmp_path)
    assert code == 2 and len(err.splitlines()) == 1
    assert ("output.checkpoint_every: module 'lab' cannot take checkpoints: its backend is a lab's controller over "
            "OpenFresco's generic TCP protocol") in err


@pytest.mark.parametrize("typo, suggestion", [
    (("mass_diagonal = [", "mass_diagnoal = ["), "; did you mean mass_diagonal?"),
    (('kind = "alpha-os"', 'kind = "alphaos"'), "; did you mean alpha-os?"),
    (("stiffness = [[", "stifness = [["), "; did you mean stiffness?"),
    (("[output]", "[outptu]"), "; did you mean output?"),
    (("[output]", "[zzz]"), ""),  # nothing close: no guess
])
def test_a_misspelt_key_or_choice_ends_its_line_with_the_nearest_name(tmp_path, capsys, typo, suggestion):
    path = tmp_path / "experiment.toml"
    path.write_text(SDOF.replace(*typo))
    code, err = _run(capsys, path, tmp_path)
    assert code == 2 and len(err.splitlines()) == 1
    assert err.endswith(suggestion) and ("did you mean" in err) == bool(suggestion), err
