"""The printed summary of `hybridsim run`: the module evaluations of an iterating integrator and the counters of an
experimental site's emulated link to its plant daemon (backend.network), from real runs."""

from __future__ import annotations

import tomllib
from pathlib import Path

from hybridsim.coordinator.cli.run import format_summary
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def summary_lines(table: dict, base_dir: Path, output: Path) -> tuple[dict, list[str]]:
    table["output"] = {"file": str(output)}
    summary = run_experiment(parse_experiment(table, base_dir=base_dir)).summary
    return summary, format_summary({**summary, "output": str(output)}).splitlines()


def test_newmark_past_yield_prints_its_module_evaluations_and_alpha_os_does_not(tmp_path: Path) -> None:
    """examples/spring_yielding.toml over 8 s: the bilinear spring yields (its peak, 0.107 m at 7.99 s, is five times
    its 0.02 m yield), where the initial stiffness overestimates the tangent, so newmark's modified Newton takes a
    second trial; alpha-os evaluates each module once a step and prints no such line."""
    table = tomllib.loads((EXAMPLES / "spring_yielding.toml").read_text())
    table["experiment"]["duration"] = 8.0
    _, lines = summary_lines(dict(table), EXAMPLES, tmp_path / "alpha.h5")
    assert not any(line.startswith("module evaluations") for line in lines)
    table["integrator"] = {"kind": "newmark"}
    summary, lines = summary_lines(table, EXAMPLES, tmp_path / "newmark.h5")
    evaluations = summary["module_evaluations"]
    assert evaluations["max_in_a_step"] >= 2 and 1.0 < evaluations["per_step"] < evaluations["max_in_a_step"]
    assert (f"module evaluations: {evaluations['per_step']:.2f} per step, at most {evaluations['max_in_a_step']} "
            "in a step") in lines


def test_a_site_link_to_its_plant_daemon_prints_its_path_counters(tmp_path: Path) -> None:
    """examples/setups/one_actuator.toml, 0.1 s (20 steps of five samples), its lab as a plant daemon across 2 ms
    losing 5 % of the segments (resent after 5 ms): every sample is an exchange, so more than 100 segments
    crossed."""
    setups = EXAMPLES / "setups"
    site = tomllib.loads((setups / "one_actuator_site.toml").read_text())
    plant = site.pop("backend")["plant"]
    site.update(initial_stiffness=[[4.0e5]], backend={
        "daemon": plant, "network": {"round_trip_s": 0.002, "loss": 0.05, "retransmit_s": 0.005, "seed": 7}})
    table = tomllib.loads((setups / "one_actuator.toml").read_text())
    table["experiment"]["duration"] = 0.1
    table["modules"][0] = {"name": "column", "kind": "experimental", "config": site}
    summary, lines = summary_lines(table, setups, tmp_path / "run.h5")
    stats = summary["modules"]["column"]
    assert stats["plant_network_segments"] > 100 and stats["plant_network_lost_segments"] > 0
    assert (f"network from site column to its plant: {stats['plant_network_segments']:.0f} segments, "
            f"{stats['plant_network_lost_segments']:.0f} lost and resent (longest wait "
            f"{1e3 * stats['plant_network_max_resend_wait_s']:.0f} ms)") in lines


def test_the_run_says_its_excitation_s_peak_in_m_s2_and_g_before_the_first_step(tmp_path: Path, capsys) -> None:
    """A record in g read as m/s^2 (or the reverse) shows before anything moves: a CSV whose peak is 0.5 g, declared
    `units = "g"` and scaled by 0.8, is said to peak at 0.8 * 0.5 * 9.80665 = 3.923 m/s^2 = 0.4 g, at its time."""
    from hybridsim.coordinator.cli import main

    (tmp_path / "pulse.csv").write_text("time_s,accel_g\n0.0,0.0\n0.02,0.25\n0.04,-0.5\n0.06,0.0\n0.08,0.0\n")
    table = (EXAMPLES / "sdof.toml").read_text().replace('"hybridsim:marths/ground_motion_elcentro.csv"',
                                                         '"pulse.csv"\nunits = "g"').replace("scale = 0.4", "scale = 0.8")
    (tmp_path / "pulse.toml").write_text(table)
    assert main(["run", str(tmp_path / "pulse.toml"), "--output", str(tmp_path / "pulse.h5")]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "excitation: pulse peak 3.923 m/s^2 = 0.4 g at 0.04 s"
    bad = (tmp_path / "pulse.toml").read_text().replace('dofs = ["x"], stiffness', 'dofs = ["X"], stiffness')
    (tmp_path / "bad.toml").write_text(bad)  # refused once the modules are open: its one line only, on stderr
    assert main(["run", str(tmp_path / "bad.toml"), "--output", str(tmp_path / "bad.h5")]) == 2
    assert capsys.readouterr().out == ""
