"""docker-compose.yml without Docker: its commands against the real CLI, then run as local processes.

Every service must come from the one image and run a command the `hybridsim` parser accepts; the site
services, started as local processes on 127.0.0.1 (free ports instead of their container port), pass the
compose healthcheck and serve the coordinator's experiment, whose response equals the in-process run.
"""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from hybridsim.coordinator.cli import build_parser
from hybridsim.coordinator.cli.site import load_config
from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import ROOT
from tests.coordinator.test_remote_frame import frame, shortened

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
ALL_SERVICES = COMPOSE["services"]
SERVICES = {name: s for name, s in ALL_SERVICES.items() if not s.get("profiles")}
"""the default profile: the hybrid-vs-monolithic frame (the "marths" profile has its own test)"""
SITES = {name: s for name, s in SERVICES.items() if s["command"][0] == "site"}
HYBRIDSIM = Path(sys.executable).with_name("hybridsim")


def test_every_service_runs_the_one_image_with_a_command_the_cli_accepts():
    assert {s["image"] for s in ALL_SERVICES.values()} == {"hybridsim:latest"}
    # read-only containers on a network with no route out (tests/deploy/test_containers.py runs them)
    assert all(s["read_only"] and s["tmpfs"] == ["/tmp"] for s in ALL_SERVICES.values())
    assert COMPOSE["networks"] == {"default": {"internal": True}}
    assert "deploy/Dockerfile" in {s.get("build", {}).get("dockerfile") for s in SERVICES.values()}
    parser = build_parser()
    coordinators = [name for name, s in SERVICES.items() if s["command"][0] == "run"]
    assert len(coordinators) == 1 and len(SITES) == 3
    for name, site in SITES.items():
        args = parser.parse_args(site["command"])
        assert (args.name, args.listen, args.insecure) == (name, "0.0.0.0:50051", True)
        assert load_config(ROOT / args.config)["dofs"]
    coordinator = SERVICES[coordinators[0]]
    args = parser.parse_args(coordinator["command"])
    experiment = load_experiment(ROOT / args.experiment)
    assert {m.name: m.address for m in experiment.modules} == {name: f"{name}:50051" for name in SITES}
    assert set(coordinator["depends_on"]) == set(SITES)


def on_loopback(command: list[str], port_file: Path) -> list[str]:
    """The compose command with its --listen on a free loopback port, reported in ``port_file``."""
    listen = command.index("--listen")
    return [str(HYBRIDSIM), *command[:listen], "--listen", "127.0.0.1:0", *command[listen + 2:],
            "--port-file", str(port_file)]


def reported_port(process: subprocess.Popen, port_file: Path, timeout_s: float = 60.0) -> int:
    """The port a site started with --port-file reports once it serves (it must not die first)."""
    deadline = time.monotonic() + timeout_s
    while not port_file.exists():
        assert process.poll() is None, f"the site exited while starting: {process.communicate()[1]}"
        assert time.monotonic() < deadline, "the site did not report its port"
        time.sleep(0.02)
    return int(port_file.read_text())


def healthcheck(service: dict, port: int, probed: str = "127.0.0.1:50051") -> list[str]:
    """The service's healthcheck command, probing 127.0.0.1:``port`` instead of the container's ``probed``."""
    kind, *command = service["healthcheck"]["test"]
    assert kind == "CMD" and command[0] == "python" and probed in command[-1]
    return [sys.executable, *[part.replace(probed, f"127.0.0.1:{port}") for part in command[1:]]]


def test_the_compose_services_as_local_processes_give_the_in_process_response(tmp_path):
    processes = {name: subprocess.Popen(on_loopback(s["command"], tmp_path / name), cwd=ROOT,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for name, s in SITES.items()}
    try:
        ports = {}
        for name in SITES:
            ports[name] = reported_port(processes[name], tmp_path / name)
            assert subprocess.run(healthcheck(SITES[name], ports[name]), timeout=30).returncode == 0
        coordinator = next(s for s in SERVICES.values() if s["command"][0] == "run")
        experiment = load_experiment(ROOT / build_parser().parse_args(coordinator["command"]).experiment)
        modules = tuple(dataclasses.replace(m, address=f"127.0.0.1:{ports[m.name]}") for m in experiment.modules)
        remote = run_experiment(shortened(dataclasses.replace(experiment, modules=modules)), output=tmp_path / "compose.h5")
    finally:
        for process in processes.values():
            process.send_signal(signal.SIGTERM)
        logs = {name: p.communicate(timeout=10)[1] for name, p in processes.items()}
    assert all(p.returncode == 0 for p in processes.values()), logs
    assert all("closed by the coordinator" in log for log in logs.values())
    in_process = run_experiment(frame(), output=tmp_path / "in_process.h5")
    scale = np.max(np.abs(in_process.displacement), axis=0)
    assert np.max(np.abs(remote.displacement - in_process.displacement) / scale) < 1e-12
