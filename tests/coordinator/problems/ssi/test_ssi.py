"""`hybridsim study ssi`: the soil block in an openseespy process behind an ``adapter`` element, the footing and
column as an ``opensees`` module, coupled by the coordinator, against one OpenSees model of soil, footing and
column under AlphaOS.  The soil is massless in both (docs/ssi.md); the difference left is the adapter's
penalty (kp = 1e15): 3.1e-8 over the first 8 s."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.problems.ssi.cases import run_case

pytestmark = pytest.mark.timeout(300)


def test_elastic_soil_structure_across_two_programs_equals_one_opensees_model() -> None:
    outcome = run_case(8.0)
    assert np.max(np.abs(outcome.monolithic[:, -1])) > 0.03   # the column top moves (70 mm)
    assert np.max(np.abs(outcome.monolithic[:, 2])) > 1e-3    # and so does the footing on the soil (5 mm)
    assert 1e-10 < outcome.max_rel_diff < 1e-6


def test_the_study_prints_one_json_object(capsys) -> None:
    assert main(["study", "ssi", "--duration", "6", "--json", "--no-files"]) == 0
    case = json.loads(capsys.readouterr().out)["cases"]["elastic"]
    assert case["max_rel_diff"] < 1e-6 and case["wall_s"] > 0
