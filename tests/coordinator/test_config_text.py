"""Configuration text past what hybridsim reads is one line, never a traceback (issue 32): nesting deeper than the
parsers follow (RecursionError before), a site's --config past the 16 MiB cap (read whole before), a results file in
a folder where its lock cannot be made (OSError before), more modules than the results file is measured to hold (the
writer crashed before), more structure DOFs than the cap (the experiment's parse took a minute at 50,000 before).  The
long test runs the cap's modules: `pytest -m long -k cap_s_modules`."""

from __future__ import annotations

import os

import pytest
import scipy.sparse as sp

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.config_text import MAX_CONFIG_TEXT_BYTES, MAX_DOFS, MAX_MODULES, MAX_RECORDS
from hybridsim.coordinator.experiment import ExperimentError, parse_experiment
from hybridsim.coordinator.recorder import read_checkpoint, read_results
from hybridsim.coordinator.recorder.dof_cost import write_figures as dof_write
from hybridsim.coordinator.recorder.record_cost import write_figures as record_write
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import MARTHS_DATA
from tests.coordinator.test_resume_after_coordinator_crash import _toml

EXPERIMENT = f"""
[experiment]
name = "deep"
dt = 0.01
duration = 1.0
[structure]
dofs = ["x"]
mass_diagonal = [1000.0]
influence = [1.0]
[ground_motion]
file = "{MARTHS_DATA / 'ground_motion_elcentro.csv'}"
[integrator]
kind = "alpha-os"
[[modules]]
name = "column"
kind = "spring"
config_file = "column.json"
"""
NESTED = "arrays or tables nested deeper than the parser can follow; flatten them"


def error_line(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "column.json").write_text('{"dofs": ["x"], "stiffness": 4e5}')
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    experiment = tmp_path / "deep.toml"
    experiment.write_text(EXPERIMENT)
    return tmp_path, experiment


def test_deep_nesting_in_an_experiment_a_config_file_or_a_sites_config_is_one_line(capsys, files):
    folder, experiment = files
    deep = folder / "deeper.toml"
    deep.write_text(EXPERIMENT + "[extra]\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    assert error_line(capsys, "run", str(deep)).endswith(f"{deep} is not valid TOML: {NESTED}")
    os.replace(folder / "deep.json", folder / "column.json")
    assert error_line(capsys, "run", str(experiment)).endswith(
        f"modules[0].config_file: cannot read {folder / 'column.json'} as JSON ({NESTED})")
    assert error_line(capsys, "site", "spring", "--config", str(folder / "column.json")) == (
        f"hybridsim site: error: --config: {folder / 'column.json'} is not valid JSON: {NESTED}")


def test_a_sites_config_past_the_cap_and_a_results_folder_without_room_for_the_lock_are_one_line(capsys, files):
    folder, experiment = files
    big = folder / "big.toml"
    with open(big, "wb") as f:
        f.truncate(MAX_CONFIG_TEXT_BYTES + 1)  # sparse: never read
    assert error_line(capsys, "site", "spring", "--config", str(big)).startswith(
        f"hybridsim site: error: --config: {big} is 16 MiB, larger than the 16 MiB a configuration may be")
    assert error_line(capsys, "run", str(experiment), "--quiet", "--output", "/proc/results.h5") == (
        "hybridsim run: error: /proc/results.h5: cannot write in /proc (No such file or directory: "
        "/proc/results.h5.lock); give --output a file in a folder this user can write")


def modules_experiment(tmp_path, n: int) -> dict:
    """n in-process springs, one DOF each, 20 steps with a checkpoint every 10."""
    dofs = [f"x{i}" for i in range(n)]
    return {
        "experiment": {"name": "many", "dt": 0.01, "duration": 0.2},
        "structure": {"dofs": dofs, "mass_diagonal": [1000.0] * n, "influence": [1.0] * n},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv")},
        "integrator": {"kind": "alpha-os"},
        "modules": [{"name": f"m{i}", "kind": "spring", "config": {"dofs": [d], "stiffness": 4e5}}
                    for i, d in enumerate(dofs)],
        "output": {"file": str(tmp_path / "many.h5"), "checkpoint_every": 10},
    }


def test_one_module_past_the_measured_cap_is_refused_in_one_line(tmp_path):
    with pytest.raises(ExperimentError) as refused:
        parse_experiment(modules_experiment(tmp_path, MAX_MODULES + 1), base_dir=tmp_path)
    assert str(refused.value) == (f"modules: {MAX_MODULES + 1} modules, more than the {MAX_MODULES} a run's results "
                                  "file is measured to hold; group DOFs into fewer modules (a module may own many DOFs)")


@pytest.mark.long
def test_a_run_of_the_cap_s_modules_is_written_and_read_back_whole(tmp_path):
    """(about 20 s) The cap is where the writer works: every row of every module on disk and read back."""
    result = run_experiment(parse_experiment(modules_experiment(tmp_path, MAX_MODULES), base_dir=tmp_path))
    stored = read_results(result.output)
    assert stored["attrs"]["completed_steps"] == 21 and stored["attrs"]["status"] == "completed"
    assert stored[f"modules/m{MAX_MODULES - 1}/force"].shape == (21, 1)
    assert read_checkpoint(result.output).step == 20


def test_one_dof_past_the_measured_cap_is_refused_in_one_line_before_anything_starts(tmp_path, capsys):
    """The DOF count is refused at the experiment's parse (no module, no results file); the refusal names the count,
    the cap and the fix, exit code 2."""
    table = modules_experiment(tmp_path, 1)
    n = MAX_DOFS + 1
    table["structure"].update(dofs=[f"x{i}" for i in range(n)], mass_diagonal=[1000.0] * n, influence=[1.0] * n)
    config = tmp_path / "wide.toml"
    config.write_text(_toml(table))
    assert main(["run", str(config), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and f"structure.dofs: {n} DOFs, more than the {MAX_DOFS} a run" in err, err
    assert "keep a module's inner DOFs inside the module" in err
    assert not (tmp_path / "many.h5").exists()


@pytest.mark.long
def test_the_writer_holds_the_dof_cap_and_the_records_cap():
    """(about 20 s) Rows of the cap's DOFs (one module owning them all) and the cap's streamed records of one module
    are written through the writer process and read back: the caps are where the writer works
    (`python benchmarks/writer_dofs.py --dofs 12000` and `python benchmarks/writer_records.py --records 2000`)."""
    wide = dof_write(MAX_DOFS)
    assert wide["failure"] is None and wide["read_back_whole"], wide
    assert wide["file_mib"] * 2**20 >= 256 * 8 * 6 * MAX_DOFS  # every row's 6 numbers a DOF on disk
    logged = record_write(MAX_RECORDS)
    assert logged["failure"] is None and logged["read_back_whole"], logged


def test_modules_sharing_the_cap_s_dofs_are_refused_before_the_pre_test(tmp_path, capsys):
    """Two linear modules on all of the cap's 12,000 DOFs (sparse K, .npz): rows of 4 x 12,000 + 2 x 24,000 numbers,
    past the 6 x 12,000 of the cap; refused in one line once the modules are open, before the pre-test, no file."""
    n = MAX_DOFS
    dofs = [f"x{i}" for i in range(n)]
    sp.save_npz(tmp_path / "k.npz", sp.identity(n, format="csr") * 4e5)
    sp.save_npz(tmp_path / "m.npz", sp.identity(n, format="csr") * 1e3)  # (a sparse mass: a dense one takes minutes)
    table = modules_experiment(tmp_path, 1)
    table["structure"] = {"dofs": dofs, "mass_file": "m.npz", "influence_dofs": dofs}
    table["modules"] = [{"name": name, "kind": "linear", "config": {"dofs": dofs, "stiffness_file": "k.npz"}}
                        for name in ("frame", "infill")]
    config = tmp_path / "shared.toml"
    config.write_text(_toml(table))
    assert main(["run", str(config), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and (f"modules: {2 * n} module DOFs beside {n} structure DOFs make rows of "
                                          f"{8 * n} numbers, more than the {6 * n} of the DOF cap") in err, err
    assert not (tmp_path / "many.h5").exists()
