"""`hybridsim examples` lists the experiments a user can run, in every folder, and not the sites' configs."""

from __future__ import annotations

from hybridsim.coordinator.cli import main


def test_the_listing_names_the_setup_experiments_and_leaves_out_site_configs(capsys):
    assert main(["examples"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if not line.startswith("(")]
    assert "sdof.toml" in listed and "setups/one_actuator.toml" in listed
    assert "opensees_site_upper.toml" not in listed and "setups/one_actuator_site.toml" not in listed
