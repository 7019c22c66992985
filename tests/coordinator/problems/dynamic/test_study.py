"""`hybridsim study dynamic --case stability --json`: the figures of docs/dynamic_modules.md from the command, each
against its theory (HHT-alpha's spectral radius, one OpenSees model under AlphaOS)."""

from __future__ import annotations

import json

from hybridsim.coordinator.cli import main


def test_the_stability_case_prints_the_radius_beside_hhts(capsys) -> None:
    """The chain's free decay after a one-sample pulse at omega_max dt = 29: the radius of HHT-alpha's least damped
    mode (Hilber, Hughes & Taylor 1977); undamped pulse at dt = 1 and 100 s equal to one OpenSees model."""
    assert main(["study", "dynamic", "--case", "stability", "--json", "--no-files"]) == 0
    figures = json.loads(capsys.readouterr().out)["cases"]["stability"]
    assert abs(figures["radius_at_dt_1"] - figures["hht_radius_at_dt_1"]) < 1e-3
    for dt in (1, 100):   # omega_max dt = 29, 2900: the coupled scheme is one model's AlphaOS (HHT on the whole)
        assert figures[f"max_rel_diff_vs_opensees_alphaos_at_dt_{dt}"] < 1e-12
    assert figures["radius_at_dt_1_4_substeps"] < 1.0                    # sub-stepped: decays (measured only)
    assert figures["decay_40_steps_at_dt_100_4_substeps"] < 1.0
