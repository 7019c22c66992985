"""`hybridsim study column`: the elastic case as a test (the hybrid column with its axial DOF force-controlled under
two components against one OpenSees model with the gravity stage then the transient), the same column as a virtual
lab's specimen behind an experimental site whose vertical actuator holds the gravity load, the Steel01 case as a
long one."""

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


def test_the_elastic_column_as_a_virtual_lab_specimen_with_its_vertical_actuator_held_equals_one_opensees_model(
        tmp_path, capsys):
    # ideal actuators, and an elastic P-Delta column whose axial force does not depend on its lateral displacements
    # (k_xz = 0): the site's force loop, one sample behind by k_xz dx, holds z exactly, so the hybrid is the one
    # model to round-off (as every linear virtual lab)
    assert main(["study", "column", "--case", "lab-elastic", "--json", "--out", str(tmp_path)]) == 0
    figures = json.loads(capsys.readouterr().out)["cases"]["lab-elastic"]
    print(figures)
    assert figures["max_rel_diff_dt_0.01"] < 1e-12
    assert min(figures["peak_x_dt_0.01"], figures["peak_y_dt_0.01"]) > 0.01  # both directions shaken (m)


@pytest.mark.long
def test_the_steel01_column_behind_a_held_vertical_actuator_converges_as_its_force_loops_one_sample_lag(
        tmp_path, capsys):
    # once the tube yields, its axial force depends on the lateral drift (k_xz != 0) and the site's loop lags one
    # control sample behind it (k_xz dx, dx the drift a sample): halving dt halves dx, so the difference with the
    # one model halves (first order)
    assert main(["study", "column", "--case", "lab-steel01", "--json", "--out", str(tmp_path)]) == 0
    figures = json.loads(capsys.readouterr().out)["cases"]["lab-steel01"]
    print(figures)
    ratio = figures["max_rel_diff_dt_0.01"] / figures["max_rel_diff_dt_0.005"]
    assert 1.8 < ratio < 2.2 and figures["max_rel_diff_dt_0.01"] < 1e-2
