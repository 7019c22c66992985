"""The compose files in real containers: the image built, the three emulations run, their results compared.

A private dockerd (tests/deploy/engine.py: own socket, data root in a temporary folder, own network
namespace) builds hybridsim:latest with deploy/containers.sh (an offline Debian base and a wheelhouse cached
on this machine, every build with --network none), then Debian's docker-compose 1.29 runs
docker-compose.yml (the frame in three site containers and the coordinator; profile "marths": frame, lab,
plant) and docker-compose.tls.yml (mutual TLS). The compose networks are `internal` and the daemon's
namespace has no link to any other: nothing leaves this machine. The results are copied out of the
containers' volume and compared with the in-process runs (1e-12 of the peak; maRTHS bit for bit, J
included); SIGTERM to the coordinator container leaves a `stopped` file holding only completed steps.
Where no engine can start (not root, no docker.io) the tests are skipped, saying why.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml

from hybridsim.coordinator.experiment import Experiment, load_experiment, parse_experiment
from hybridsim.coordinator.problems.marths.hybrid import design_card
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import RunResult, run_experiment
from tests.conftest import ROOT
from tests.deploy import engine as engines

pytestmark = [pytest.mark.containers, pytest.mark.timeout(1500)]  # the first test builds the image
COMPOSE = "/usr/bin/docker-compose"
RECORD_S = 10.0
"""seconds of El Centro the emulations run (the compose files run all 41 s: README, "Emulating")"""
PROBE = ("import sys; from hybridsim.wire import link; from hybridsim.wire.remote import RemoteModule; "
         "print(link.link_address(RemoteModule(sys.argv[1]).describe().info))")
"""the step link a client gets from the site at argv[1] (None: no link)"""


def say(request: pytest.FixtureRequest, text: str) -> None:
    """One line in the test output, whatever pytest captures (the CI log shows what ran and how long)."""
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n[containers] {text}", flush=True)


@pytest.fixture(scope="module")
def engine(request: pytest.FixtureRequest) -> Iterator[engines.Engine]:
    """A private engine with hybridsim:latest built; everything it ran is removed afterwards."""
    reason = engines.unavailable()
    if reason:
        pytest.skip(reason)
    started = time.monotonic()
    try:
        engine = engines.Engine.start()
    except RuntimeError as exc:
        pytest.skip(f"containers: no engine could start here: {exc}")
    try:
        say(request, f"dockerd {engine.docker('version', '--format', '{{.Server.Version}}').stdout.strip()} on "
                     f"{engine.folder}/docker.sock, data in {engine.folder}/data, in a network namespace of its own "
                     f"({time.monotonic() - started:.1f} s)")
        started = time.monotonic()
        # the wheelhouse takes the versions of this environment: the image computes as the references here
        built = engine.run(["bash", "deploy/containers.sh", "image"], cwd=ROOT, env={"PYTHON": sys.executable})
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        say(request, f"image hybridsim:latest built on the offline Debian base with --network none "
                     f"({time.monotonic() - started:.0f} s, the base and the wheelhouse from "
                     f"{'the machine cache' if 'debootstrap' not in built.stdout else 'debootstrap and PyPI'})")
        yield engine
    finally:
        engine.stop()


def shortened(path: Path) -> Experiment:
    """The experiment file at ``path`` over the first :data:`RECORD_S` of its record."""
    table = tomllib.loads(path.read_text())
    table["experiment"]["duration"] = RECORD_S
    return parse_experiment(table, base_dir=path.parent)


def volume_race(done: subprocess.CompletedProcess) -> bool:
    """Whether ``up`` failed on the Docker engine's own race: two containers of the project filling the same new
    named volume from the image at once ("failed to mkdir .../_data/...: file exists"); the second ``up`` finds
    the volume filled, so the services are started again once (the race is the engine's, not hybridsim's)."""
    text = done.stdout + done.stderr
    return done.returncode != 0 and "failed to mkdir" in text and "file exists" in text


class Project:
    """One compose project (``-p NAME -f FILE``) on the engine; ``shortened``: the services whose experiment
    file (``run FILE``) is replaced, by a bind mount, with the same file over :data:`RECORD_S` of the record."""

    def __init__(self, engine: engines.Engine, name: str, file: str, *profiles: str, folder: Path,
                 shortened: tuple[str, ...] = ()) -> None:
        self.engine, self.name = engine, name
        services = yaml.safe_load((ROOT / file).read_text())["services"]
        override: dict = {"services": {}}
        for service in shortened:
            experiment = services[service]["command"][1]
            text = (ROOT / experiment).read_text().replace("[experiment]\n", f"[experiment]\nduration = {RECORD_S}\n", 1)
            (folder / Path(experiment).name).write_text(text)
            override["services"][service] = {"volumes": [f"{folder / Path(experiment).name}:/app/{experiment}:ro"]}
        files = [ROOT / file]
        if shortened:
            files.append(folder / "override.yml")
            files[-1].write_text(yaml.safe_dump(override))
        self.args = [COMPOSE, "-p", name, *[a for f in files for a in ("-f", str(f))],
                     *[a for p in profiles for a in ("--profile", p)]]

    def compose(self, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
        done = self.engine.run([*self.args, *args], cwd=ROOT, timeout=timeout)
        if args[:1] == ("up",) and volume_race(done):
            done = self.engine.run([*self.args, *args], cwd=ROOT, timeout=timeout)
        assert done.returncode == 0, f"docker-compose {' '.join(args)}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        return done

    def container(self, service: str) -> str:
        return self.compose("ps", "-q", service).stdout.strip()

    def up(self, service: str) -> float:
        """Run ``service`` and what it depends on to its exit (code 0); the wall time (s)."""
        started = time.monotonic()
        command = [*self.args, "up", "--no-build", "--abort-on-container-exit", "--exit-code-from", service, service]
        done = self.engine.run(command, cwd=ROOT)
        if volume_race(done):
            done = self.engine.run(command, cwd=ROOT)
        if done.returncode != 0:
            logs = self.engine.run([*self.args, "logs", "--no-color", "--tail", "20"], cwd=ROOT).stdout
            pytest.fail(f"docker-compose up {service} exited {done.returncode}:\n{done.stderr[-3000:]}\n{logs}")
        return time.monotonic() - started

    def copy_out(self, service: str, path: str, target: Path) -> dict:
        """The results file ``path`` of the container of ``service``, copied to ``target``, read."""
        self.engine.docker("cp", f"{self.container(service)}:{path}", str(target))
        return read_results(target)

    def networks(self) -> dict[str, bool]:
        """Each network of the project: whether it is internal (no route out)."""
        names = self.engine.docker("network", "ls", "-q", "--filter", f"label=com.docker.compose.project={self.name}")
        found = json.loads(self.engine.docker("network", "inspect", *names.stdout.split()).stdout)
        return {n["Name"]: n["Internal"] for n in found}

    def emulate(self, service: str, results: str, target: Path, logs_of: str = "") -> tuple[float, dict, str]:
        """Run ``service`` to its end, copy its ``results`` file out to ``target``, check that the project's one
        network is internal, remove the project: (wall time s, the results read, the logs of ``logs_of``)."""
        try:
            seconds = self.up(service)
            stored = self.copy_out(service, results, target)
            logs = self.compose("logs", "--no-color", logs_of).stdout if logs_of else ""
            assert self.networks() == {f"{self.name}_default": True}
        finally:
            self.down()
        return seconds, stored, logs

    def down(self) -> None:
        self.compose("down", "--volumes", "--timeout", "20")


@pytest.fixture(scope="module")
def frame_in_process(tmp_path_factory) -> RunResult:
    """examples/frame_three_linear.toml in one process: the reference of both frame emulations."""
    folder = tmp_path_factory.mktemp("frame")
    return run_experiment(shortened(ROOT / "examples" / "frame_three_linear.toml"), output=folder / "frame.h5")


def relative_difference(stored: dict, reference: RunResult) -> float:
    """The largest difference of the stored displacements to the reference's first rows, over each DOF's peak."""
    rows = stored["displacement"].shape[0]
    scale = np.max(np.abs(reference.displacement), axis=0)
    difference = np.abs(stored["displacement"] - reference.displacement[:rows])
    # a DOF still at rest (a stop within the record's first 5 s) must match exactly: 0 where both are 0, else inf
    return float(np.max(np.divide(difference, scale, out=np.where(difference > 0, np.inf, 0.0), where=scale > 0)))


def test_the_frame_in_three_site_containers_equals_the_in_process_run(engine, frame_in_process, tmp_path, request):
    project = Project(engine, "hsframe", "docker-compose.yml", folder=tmp_path, shortened=("coordinator",))
    seconds, stored, _ = project.emulate("coordinator", "/app/results/frame_three_sites_compose.h5",
                                         tmp_path / "frame.h5")
    assert stored["attrs"]["status"] == "completed"
    assert stored["displacement"].shape == frame_in_process.displacement.shape
    difference = relative_difference(stored, frame_in_process)
    assert difference < 1e-12
    say(request, f"default profile (3 story sites + coordinator, {stored['displacement'].shape[0] - 1} steps): "
                 f"{seconds:.0f} s, max relative difference to in process {difference:.1e}")


def test_the_marths_profile_gives_the_in_process_response_and_criteria_bit_for_bit(engine, tmp_path, request):
    project = Project(engine, "hsmarths", "docker-compose.yml", "marths", folder=tmp_path, shortened=("marths",))
    seconds, stored, _ = project.emulate("marths", "/app/results/marths_compose.h5", tmp_path / "marths.h5")
    in_process = run_experiment(design_card(tmp_path / "inprocess", RECORD_S, daemons=False))
    assert stored["attrs"]["status"] == "completed"
    np.testing.assert_array_equal(stored["displacement"], in_process.displacement)
    J = json.loads(stored["attrs"]["J"])
    assert J == in_process.summary["evaluation"]["J"]
    say(request, f"marths profile (frame, lab, plant + coordinator, {stored['displacement'].shape[0] - 1} steps): "
                 f"{seconds:.0f} s, displacement and J bit for bit (J2 {J['J2']}, J7 {J['J7']})")


def test_the_mutual_tls_emulation_equals_the_in_process_run(engine, frame_in_process, tmp_path, request):
    project = Project(engine, "hsframetls", "docker-compose.tls.yml", folder=tmp_path, shortened=("coordinator",))
    seconds, stored, logs = project.emulate("coordinator", "/app/results/frame_three_sites_tls_compose.h5",
                                            tmp_path / "tls.h5", logs_of="story1")
    assert "(mutual TLS), health on 127.0.0.1:50052" in logs and "closed by the coordinator" in logs
    assert stored["attrs"]["status"] == "completed"
    difference = relative_difference(stored, frame_in_process)
    assert difference < 1e-12
    say(request, f"mutual-TLS emulation (certs, 3 story sites + coordinator): {seconds:.0f} s, "
                 f"max relative difference {difference:.1e}")


def test_sigterm_to_the_coordinator_leaves_a_stopped_file_and_no_container_is_offered_anothers_link(
        engine, tmp_path, request):
    project = Project(engine, "hsstop", "docker-compose.yml", folder=tmp_path)
    try:
        project.compose("up", "--no-build", "--detach", "coordinator")
        coordinator, story1, story2 = (project.container(s) for s in ("coordinator", "story1", "story2"))
        # the step link story1 serves on its own loopback: offered inside its container, not to story2's
        assert engine.docker("exec", story1, "python", "-c", PROBE, "story1:50051").stdout.startswith("127.0.0.1:")
        assert engine.docker("exec", story2, "python", "-c", PROBE, "story1:50051").stdout.strip() == "None"
        deadline = time.monotonic() + 120
        while running_steps(engine, coordinator, tmp_path / "running.h5") == 0:  # the run is under way
            assert time.monotonic() < deadline, "the coordinator wrote no step within 120 s"
            time.sleep(1.0)
        signalled = datetime.datetime.now(datetime.timezone.utc)
        engine.docker("kill", "--signal", "SIGTERM", coordinator)
        try:
            code = int(engine.docker("wait", coordinator, timeout=60).stdout)
        except subprocess.TimeoutExpired:  # keep what shows why: the coordinator's log and state
            state = engine.docker("inspect", "--format", "{{json .State}}", coordinator, check=False).stdout
            log = engine.docker("logs", "--tail", "50", coordinator, check=False)
            pytest.fail(f"the coordinator did not exit within 60 s of SIGTERM; state {state}\n{log.stdout}{log.stderr}")
        # from the signal to the exit as the engine recorded it (not the docker client's own start-up under load)
        seconds = (exited_at(engine, coordinator) - signalled).total_seconds()
        stored = project.copy_out("coordinator", "/app/results/frame_three_sites_compose.h5", tmp_path / "stopped.h5")
    finally:
        project.down()
    status, steps = stored["attrs"]["status"], int(stored["attrs"]["completed_steps"])
    assert (status, code) == ("stopped: interrupted", 130) and seconds < 10, seconds
    experiment = load_experiment(ROOT / "examples" / "frame_three_linear.toml")
    assert 0 < steps == stored["displacement"].shape[0] < experiment.motion.acceleration.size
    first = dataclasses.replace(experiment, motion=dataclasses.replace(  # the same steps, uninterrupted
        experiment.motion, acceleration=experiment.motion.acceleration[:steps]))
    assert relative_difference(stored, run_experiment(first, output=tmp_path / "first.h5")) < 1e-12
    say(request, f"SIGTERM to the coordinator container: exit {code} after {seconds:.1f} s, status {status!r}, "
                 f"{steps} completed steps equal to the in-process run; no site offered another's step link")


def exited_at(engine: engines.Engine, container: str) -> datetime.datetime:
    """When ``container`` exited, as the engine recorded it (RFC 3339 with nanoseconds, UTC)."""
    finished = engine.docker("inspect", "--format", "{{.State.FinishedAt}}", container).stdout.strip()
    whole, _, fraction = finished.rstrip("Z").partition(".")
    return datetime.datetime.fromisoformat(f"{whole}.{(fraction + '000000')[:6]}+00:00")


def running_steps(engine: engines.Engine, container: str, copy: Path) -> int:
    """The completed steps of the results file a running coordinator writes (0 until it has written some)."""
    if engine.docker("cp", f"{container}:/app/results/frame_three_sites_compose.h5", str(copy), check=False).returncode:
        return 0
    try:
        return int(read_results(copy)["attrs"]["completed_steps"])
    except (OSError, KeyError, ValueError):  # copied mid-write
        return 0
