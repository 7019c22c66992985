"""`hybridsim study column`: the elastic case as a test (the hybrid column with its axial DOF force-controlled under
two components against one OpenSees model with the gravity stage then the transient), the Steel01 case as a long
one."""

from __future__ import annotations

import json

import pytest

from hybridsim.coordinator.cli import main


def test_the_elastic_column_under_two_components_equals_one_opensees_model(tmp_path, capsys):
    assert main(["study", "column", "--case", "elastic", "--json", "--out", str(tmp_path)]) == 0
    figures = json.loads(capsys.readouterr().out)["cases"]["elastic"]
    print(figures)
    assert figures["max_rel_diff_dt_0.01"] < 1e-6
    assert figures["gravity_effect"] > 0.05  # the held gravity load matters (P-Delta)
    assert min(figures["peak_x_dt_0.01"], figures["peak_y_dt_0.01"]) > 0.01  # both directions shaken (m)


@pytest.mark.long
def test_the_steel01_fibre_column_equals_one_opensees_model_at_dt_and_half_dt(tmp_path, capsys):
    assert main(["study", "column", "--case", "steel01", "--json", "--out", str(tmp_path)]) == 0
    figures = json.loads(capsys.readouterr().out)["cases"]["steel01"]
    print(figures)
    assert figures["max_rel_diff_dt_0.01"] < 1e-6 and figures["max_rel_diff_dt_0.005"] < 1e-6
