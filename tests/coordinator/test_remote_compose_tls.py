"""docker-compose.tls.yml without Docker: its commands against the real CLI, then run as local processes.

The processes run in a folder laid out as the image's /app (examples/, coordinator/, deploy/ with an empty
certs/), so that every relative path of the compose file resolves as in the containers: the certs service
writes deploy/certs/ with `hybridsim certs`, the sites serve mutual TLS from it on free loopback ports
(their plaintext health ports too), pass the compose healthcheck, and serve the coordinator's experiment,
whose response equals the in-process run.
"""

from __future__ import annotations

import dataclasses
import shutil
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

from hybridsim.coordinator.cli import build_parser
from hybridsim.coordinator.experiment import load_experiment
from hybridsim.wire.remote import RemoteModule
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.wire.contract import ModuleError, Session
from tests.conftest import ROOT
from tests.conftest import free_port
from tests.coordinator.test_remote_compose import HYBRIDSIM, healthcheck, on_loopback, reported_port
from tests.coordinator.test_remote_frame import frame, shortened

COMPOSE = yaml.safe_load((ROOT / "docker-compose.tls.yml").read_text())
SERVICES = COMPOSE["services"]
SITES = {name: s for name, s in SERVICES.items() if s["command"][0] == "site"}
CERTS_MOUNT = "certs:/app/deploy/certs"


def test_every_service_runs_the_one_image_and_the_sites_serve_mutual_tls_from_the_certs_volume():
    parser = build_parser()
    assert {s["image"] for s in SERVICES.values()} == {"hybridsim:latest"}
    assert all(s["read_only"] for s in SERVICES.values()) and COMPOSE["networks"] == {"default": {"internal": True}}
    certs = parser.parse_args(SERVICES["certs"]["command"])
    assert (certs.out, sorted(certs.sites), certs.force) == (Path("deploy/certs"), sorted(SITES), True)
    assert SERVICES["certs"]["volumes"] == [CERTS_MOUNT]
    for name, site in SITES.items():
        args = parser.parse_args(site["command"])
        assert (args.name, args.listen, args.insecure, args.health_listen) == (name, "0.0.0.0:50051", False,
                                                                               "127.0.0.1:50052")
        # each site reads its own certificate and key and the CA, all from the read-only volume
        assert (args.tls_cert, args.tls_key, args.tls_ca) == (Path(f"deploy/certs/{name}.crt"),
                                                              Path(f"deploy/certs/{name}.key"), Path("deploy/certs/ca.crt"))
        assert site["volumes"] == [f"{CERTS_MOUNT}:ro", "numba-cache:/app/.numba-cache"]
        assert site["depends_on"] == {"certs": {"condition": "service_completed_successfully"}}
    coordinator = SERVICES["coordinator"]
    assert f"{CERTS_MOUNT}:ro" in coordinator["volumes"] and set(coordinator["depends_on"]) == set(SITES)


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """A folder laid out as the image's WORKDIR /app."""
    folder = tmp_path / "app"
    (folder / "deploy" / "certs").mkdir(parents=True)
    for name in ("coordinator", "examples"):
        (folder / name).symlink_to(ROOT / name)
    for path in (ROOT / "deploy").glob("*.toml"):  # copies: an experiment's paths start from its real folder
        shutil.copy(path, folder / "deploy")
    return folder


def test_the_tls_compose_services_as_local_processes_give_the_in_process_response(app, tmp_path):
    made = subprocess.run([str(HYBRIDSIM), *SERVICES["certs"]["command"]], cwd=app, capture_output=True, text=True,
                          timeout=60)
    assert made.returncode == 0, made.stderr
    health = {name: free_port() for name in SITES}
    commands = {}
    for name, site in SITES.items():
        command = on_loopback(site["command"], tmp_path / name)
        command[command.index("--health-listen") + 1] = f"127.0.0.1:{health[name]}"
        commands[name] = command
    processes = {name: subprocess.Popen(command, cwd=app, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for name, command in commands.items()}
    try:
        ports = {}
        for name in SITES:
            ports[name] = reported_port(processes[name], tmp_path / name)
            probe = healthcheck(SITES[name], health[name], probed="127.0.0.1:50052")
            assert subprocess.run(probe, timeout=30).returncode == 0
        # a client without the coordinator's certificate gets nowhere
        with pytest.raises(ModuleError, match="Socket closed; a site that serves TLS closes the connection"):
            RemoteModule(f"127.0.0.1:{ports['story1']}", name="story1", deadline_s=0.5).open(Session(1.0, ()))
        experiment = load_experiment(app / build_parser().parse_args(SERVICES["coordinator"]["command"]).experiment)
        assert all(m.credentials is not None and m.credentials.certificate for m in experiment.modules)
        modules = tuple(dataclasses.replace(m, address=f"127.0.0.1:{ports[m.name]}") for m in experiment.modules)
        remote = run_experiment(shortened(dataclasses.replace(experiment, modules=modules)), output=tmp_path / "tls.h5")
    finally:
        for process in processes.values():
            process.send_signal(signal.SIGTERM)
        logs = {name: p.communicate(timeout=10)[1] for name, p in processes.items()}
    assert all(p.returncode == 0 for p in processes.values()), logs
    assert all("(mutual TLS), health on 127.0.0.1:" in log and "closed by the coordinator" in log
               for log in logs.values())
    in_process = run_experiment(frame(), output=tmp_path / "in_process.h5")
    scale = np.max(np.abs(in_process.displacement), axis=0)
    assert np.max(np.abs(remote.displacement - in_process.displacement) / scale) < 1e-12
    print(f"TLS compose: {remote.summary['steps']} steps x {len(SITES)} mutual-TLS sites")
