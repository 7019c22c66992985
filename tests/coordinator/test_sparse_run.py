"""A run over a sparse structure (mass and module stiffnesses in .npz and .mtx files) against one OpenSees model.

The 300-DOF frame of ``frame2d`` split at story 5 into two sparse linear modules (``large_frame.write``): the
pre-test measures K_I sparse, alpha-OS factors with SuperLU; the oracle is the whole frame as one OpenSees
model under OpenSees' AlphaOS.  The 10,000-DOF case is ``hybridsim bench``'s (long marker below).
"""

from __future__ import annotations

import pytest
import scipy.sparse as sp

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.large_frame import compare, write
from hybridsim.coordinator.recorder import read_rows
from hybridsim.coordinator.recorder.layout import model_matrix
from hybridsim.modules.opensees.models.frame2d import Frame


def test_a_sparse_hybrid_frame_of_300_dofs_matches_one_opensees_model(tmp_path):
    result = compare(tmp_path, Frame(10, 10), split=5, steps=300)
    print(f"300-DOF sparse hybrid vs OpenSees AlphaOS: {result.difference:.1e} (peak {result.peak:.3f} m)")
    assert result.peak > 0.05
    assert result.difference < 1e-8
    stored = read_rows(tmp_path / "frame.h5", 0, 1)
    stiffness = model_matrix(stored, "initial_stiffness", 300)
    assert sp.issparse(stiffness) and stiffness.nnz < 0.05 * 300 ** 2  # kept sparse in the results file


@pytest.mark.long
def test_a_sparse_hybrid_frame_of_10000_dofs_matches_one_opensees_model(tmp_path):
    result = compare(tmp_path, Frame(58, 58), split=29, steps=200)
    print(f"{result.ndof}-DOF sparse hybrid vs OpenSees AlphaOS: {result.difference:.1e}, run {result.run_s:.1f} s")
    assert result.ndof > 10_000 and result.peak > 0.01
    assert result.difference < 1e-8


CASES = {
    "a file that is no matrix": (lambda folder: (folder / "mass.npz").write_bytes(b"PK\x03\x04 not a zip"),
                                 "structure.mass_file: ", "is not a readable matrix"),
    "a module's matrix of the wrong size": (
        lambda folder: sp.save_npz(folder / "lower.npz", sp.identity(5, format="csr")),
        "linear module: stiffness must be", "(one row per DOF), got shape (5, 5)"),
    "condensation of a sparse structure": (
        lambda folder: (folder / "frame.toml").write_text((folder / "frame.toml").read_text().replace(
            'mass_file = "mass.npz"', 'mass_file = "mass.npz"\ncondense_massless = true')),
        "structure.condense_massless: a sparse structure", "give every DOF mass"),
    "a scheme without a sparse path": (
        lambda folder: (folder / "frame.toml").write_text((folder / "frame.toml").read_text().replace(
            'kind = "alpha-os"\nalpha = -0.05', 'kind = "newmark"')),
        "newmark takes dense matrices only", "alpha-os"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_sparse_structure_gives_one_line_and_exit_code_2(tmp_path, capsys, case):
    spoil, *expected = CASES[case]
    path = write(tmp_path, Frame(3, 2), split=1, steps=10)
    spoil(tmp_path)
    code = main(["run", str(path), "--quiet", "--output", str(tmp_path / "out.h5")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert all(part in err for part in expected), err
