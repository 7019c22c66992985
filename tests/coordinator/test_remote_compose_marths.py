"""docker-compose.yml, profile "marths": the design-card topology of the maRTHS benchmark without Docker.

Its commands are checked against the real CLI; then the plant, the experimental site and the frame run
as local processes on 127.0.0.1 (the site's backend pointed at the plant's loopback port instead of
plant:50051) and serve the coordinator's experiment, whose response and J equal the in-process run.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import subprocess

import numpy as np

from hybridsim.coordinator.cli import build_parser
from hybridsim.coordinator.cli.site import load_config
from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import ROOT
from hybridsim.coordinator.problems.marths.hybrid import design_card
from tests.coordinator.test_remote_compose import ALL_SERVICES, healthcheck, on_loopback, reported_port

PROFILE = {name: s for name, s in ALL_SERVICES.items() if "marths" in s.get("profiles", ())}
SITES = {name: s for name, s in PROFILE.items() if s["command"][0] == "site"}
DURATION = 8.0


def test_the_marths_profile_has_one_service_per_site_and_a_coordinator():
    parser = build_parser()
    assert set(SITES) == {"frame", "lab", "plant"}
    kinds = {name: parser.parse_args(s["command"]).kind for name, s in SITES.items()}
    assert kinds == {"frame": "linear", "lab": "experimental", "plant": "plant"}
    for site in SITES.values():
        assert load_config(ROOT / parser.parse_args(site["command"]).config)
    lab = load_config(ROOT / parser.parse_args(SITES["lab"]["command"]).config)
    assert lab["backend"]["address"] == "plant:50051"
    (coordinator,) = [s for s in PROFILE.values() if s["command"][0] == "run"]
    experiment = load_experiment(ROOT / parser.parse_args(coordinator["command"]).experiment)
    assert {m.name: m.address for m in experiment.modules} == {"frame": "frame:50051", "lab": "lab:50051"}


def start(name: str, command: list[str], tmp_path) -> tuple[subprocess.Popen, int]:
    process = subprocess.Popen(on_loopback(command, tmp_path / f"{name}.port"), cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    port = reported_port(process, tmp_path / f"{name}.port")
    assert subprocess.run(healthcheck(SITES[name], port), timeout=30).returncode == 0
    return process, port


def test_the_marths_services_as_local_processes_give_the_in_process_criteria(tmp_path):
    parser = build_parser()
    processes = {}
    try:
        processes["plant"], plant_port = start("plant", SITES["plant"]["command"], tmp_path)
        lab_config = load_config(ROOT / parser.parse_args(SITES["lab"]["command"]).config)
        lab_config["backend"]["address"] = f"127.0.0.1:{plant_port}"
        lab_config["record"] = "lab_record.h5"
        (tmp_path / "lab.json").write_text(json.dumps(lab_config))
        command = SITES["lab"]["command"]
        config_at = command.index("--config") + 1
        lab_command = [*command[:config_at], str(tmp_path / "lab.json"), *command[config_at + 1:]]
        processes["lab"], lab_port = start("lab", lab_command, tmp_path)
        processes["frame"], frame_port = start("frame", SITES["frame"]["command"], tmp_path)
        (coordinator,) = [s for s in PROFILE.values() if s["command"][0] == "run"]
        experiment = load_experiment(ROOT / parser.parse_args(coordinator["command"]).experiment)
        ports = {"frame": frame_port, "lab": lab_port}
        modules = tuple(dataclasses.replace(m, address=f"127.0.0.1:{ports[m.name]}",
                                            **({"config": lab_config, "base_dir": tmp_path} if m.name == "lab" else {}))
                        for m in experiment.modules)
        steps = round(DURATION / experiment.dt)
        motion = dataclasses.replace(experiment.motion, acceleration=experiment.motion.acceleration[: steps + 1])
        compose = run_experiment(dataclasses.replace(experiment, modules=modules, motion=motion),
                                 output=tmp_path / "compose.h5")
    finally:
        for process in processes.values():
            process.send_signal(signal.SIGTERM)
        logs = {name: p.communicate(timeout=20)[1] for name, p in processes.items()}
    assert all(p.returncode == 0 for p in processes.values()), logs
    in_process = run_experiment(design_card(tmp_path / "inprocess", DURATION, daemons=False))
    np.testing.assert_array_equal(compose.displacement, in_process.displacement)
    assert compose.summary["evaluation"]["J"] == in_process.summary["evaluation"]["J"]
