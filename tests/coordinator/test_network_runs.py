"""The same run across emulated round trips of 0, 5, 20 and 60 ms on every channel and lab protocol, a real site
process on 127.0.0.1 (gRPC stream and unary, the step link on TCP, OpenFresco's SimApp, UI-SIMCOR's LabView1);
lost packets survived; the `network` table and `--network` validated."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import tomllib

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.experiment import ExperimentError, load_experiment, parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.registry import build_module
from hybridsim.wire.server import SiteServer
from hybridsim.wire.network import Network
from tests.conftest import EXAMPLES
from tests.interop.helpers import CONTROL_POINTS, LINEAR, building, relative, site

pytestmark = pytest.mark.timeout(300)
DURATION = 0.1
"""s of the building's record: 10 steps of 10 ms, after a pre-test of 5 steps"""
ROUND_TRIPS = {"stream": 1, "unary": 1, "link": 1, "openfresco": 1, "simcor": 3}
"""round trips per step: one message each way, but LabView1's propose, execute and get-control-point"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """One `hybridsim site linear` serving gRPC, its step link on TCP, SimApp and UI-SIMCOR (LabView1)."""
    folder = tmp_path_factory.mktemp("lab")
    config = {**LINEAR, "simcor": {"control_points": CONTROL_POINTS, "protocol": "LabView1"}}
    with site(folder, "linear", config, "openfresco", "simcor", extra=("--link-listen", "127.0.0.1:0")) as running:
        yield running


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reference")
    table = building(folder, {"kind": "linear", "config": LINEAR}, "in-process")
    table["experiment"]["duration"] = DURATION
    return run_experiment(parse_experiment(table, base_dir=folder))


def module_of(way: str, lab) -> dict:
    if way == "openfresco":
        return {"kind": "openfresco", "address": lab.addresses["openfresco"],
                "config": {"dofs": ["u2", "u3"], "server": "elem-server"}}
    if way == "simcor":
        return {"kind": "simcor", "address": lab.addresses["simcor"],
                "config": {"dofs": ["u2", "u3"], "control_points": CONTROL_POINTS, "protocol": "LabView1"}}
    return {"kind": "linear", "address": lab.addresses["module"], "transport": way}


@pytest.mark.parametrize("round_trip_s", [0.0, 0.005, 0.020, 0.060])
@pytest.mark.parametrize("way", list(ROUND_TRIPS))
def test_the_same_run_across_0_5_20_and_60_ms_round_trips(tmp_path, lab, reference, way, round_trip_s):
    """Every step pays its round trips (at least k (R - 2 J), the median at most k (R + 2 J) + 10 ms of work and
    scheduling) and the response is the in-process one: the network changes when, never what."""
    jitter_s = round_trip_s / 10
    network = {"round_trip_s": round_trip_s, "jitter_s": jitter_s, "seed": 1}
    table = building(tmp_path, {**module_of(way, lab), "network": network}, f"{way}-{round_trip_s}")
    table["experiment"]["duration"] = DURATION
    result = run_experiment(parse_experiment(table, base_dir=tmp_path))
    assert relative(result.displacement, reference.displacement) < 1e-12
    assert np.abs(reference.displacement).max() > 1e-5
    k = ROUND_TRIPS[way]
    p50_s = 1e-6 * result.summary["step_time_us"]["p50"]
    assert k * (round_trip_s - 2 * jitter_s) <= p50_s <= k * (round_trip_s + 2 * jitter_s) + 0.010
    assert result.summary["network"] == {"building": Network(round_trip_s, jitter_s).describe()}
    counters = result.summary["modules"]["building"]
    assert counters["network_segments"] >= 2 * k * result.summary["steps"]
    assert counters["network_lost_segments"] == 0


def test_lost_packets_are_resent_late_and_a_lockstep_site_commands_exactly_as_without_them(tmp_path):
    """The experimental site (one actuator, polynomial compensation, a virtual lab) served over gRPC on 127.0.0.1
    across 20 ms ± 2 ms losing 20 % of the segments: TCP resends them (100 ms later, doubling for a segment lost
    again; Linux's own wait would be 220 ms), the run completes, and every control sample's command equals the
    site's in process, bit for bit (a lockstep site waits; it never jumps)."""
    folder = EXAMPLES / "setups"
    source = tomllib.loads((folder / "one_actuator.toml").read_text())
    source["experiment"]["duration"] = 0.05
    site_config = tomllib.loads((folder / "one_actuator_site.toml").read_text())
    server = SiteServer(lambda: build_module("experimental", site_config, folder), "column")
    runs = {}
    try:
        for name, network in (("direct", None), ("lossy", {"round_trip_s": 0.02, "jitter_s": 0.002, "loss": 0.2,
                                                          "retransmit_s": 0.1, "seed": 5})):
            table = json.loads(json.dumps(source))
            if network is not None:
                table["modules"][0] = {"name": "column", "kind": "experimental", "address": server.address,
                                       "network": network}
            table["output"]["file"] = str(tmp_path / f"{name}.h5")
            runs[name] = run_experiment(parse_experiment(table, base_dir=folder))
    finally:
        server.stop(0)
    counters = runs["lossy"].summary["modules"]["column"]
    assert counters["network_lost_segments"] >= 1 and counters["network_max_resend_wait_s"] >= 0.1
    records = {}
    for name, run in runs.items():
        with h5py.File(run.output, "r") as f:
            records[name] = {key: f[f"modules/column/records/{key}"][()] for key in ("commands", "measured_strokes")}
    assert records["lossy"]["commands"].size > 0
    for key in ("commands", "measured_strokes"):
        assert np.array_equal(records["lossy"][key], records["direct"][key], equal_nan=True)  # the last: no target
    assert np.array_equal(runs["lossy"].displacement, runs["direct"].displacement)


def test_hybridsim_network_puts_a_path_in_front_of_a_lab_protocol_server(tmp_path, lab, reference):
    """`hybridsim network` in front of the site's SimApp port, for a client hybridsim does not start (here the
    openfresco kind, told the proxy's address): each step takes the round trip; SIGTERM prints what crossed."""
    command = [sys.executable, "-m", "hybridsim", "network", "--to", lab.addresses["openfresco"],
               "--path", "round_trip_s=0.02,jitter_s=0.002,seed=1"]
    proxy = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proxy.stdout.readline()
        address = re.match(r"hybridsim network: (127\.0\.0\.1:\d+) -> ", line).group(1)
        assert line.endswith(f"-> {lab.addresses['openfresco']} across 20 ms round trip ± 2 ms jitter\n")
        module = module_of("openfresco", lab)
        table = building(tmp_path, {**module, "address": address}, "through-proxy")
        table["experiment"]["duration"] = DURATION
        result = run_experiment(parse_experiment(table, base_dir=tmp_path))
    finally:
        proxy.send_signal(signal.SIGTERM)
        out, err = proxy.communicate(timeout=10)
    assert relative(result.displacement, reference.displacement) < 1e-12
    assert 1e-6 * result.summary["step_time_us"]["p50"] >= 0.02 - 0.004
    assert proxy.returncode == 0, err
    crossed = int(re.search(r"(\d+) segments crossed, 0 lost", out).group(1))
    assert crossed >= 2 * result.summary["steps"]


BASE = (EXAMPLES / "sdof.toml").read_text()
LOCAL = BASE.replace('kind = "linear"', 'kind = "linear"\naddress = "local"')


@pytest.mark.parametrize("text, options, expected", [
    (BASE.replace('kind = "linear"', 'kind = "linear"\nnetwork = { round_trip_s = 0.02 }'), [],
     "modules[0].network: a module in process has no network to emulate; give it an address"),
    (LOCAL.replace('address = "local"', 'address = "local"\nnetwork = { rtt = 0.02 }'), [],
     "unknown key modules[0].network.rtt; allowed: jitter_s, loss, retransmit_s, round_trip_s, seed"),
    (LOCAL.replace('address = "local"', 'address = "local"\nnetwork = { round_trip_s = 0.01, jitter_s = 0.02 }'), [],
     "modules[0].network: jitter_s (0.02 s) may be at most half of round_trip_s (0.01 s)"),
    (LOCAL.replace('address = "local"', 'address = "local"\nnetwork = { loss = 0.7 }'), [],
     "modules[0].network.loss must be a number >= 0 and <= 0.5, got 0.7"),
    (LOCAL, ["round_trip_s=-1"], "--network.round_trip_s must be a number >= 0 (s), got -1"),
    (LOCAL, ["frame:round_trip_s=0.02"], "--network frame:round_trip_s=0.02: no module is named 'frame' (modules: "
                                         "column)"),
    (LOCAL, ["round_trip_s=fast"], "--network round_trip_s=fast: round_trip_s must be a number, not 'fast'"),
    (LOCAL, ["0.02"], "--network 0.02: give key=value pairs"),
    (BASE, ["column:round_trip_s=0.02"], "--network column:round_trip_s=0.02: module 'column' runs in the "
                                         "coordinator's process, with no network to emulate"),
    (BASE, ["round_trip_s=0.02"], "--network round_trip_s=0.02: no module runs at an address or as a local daemon"),
])
def test_a_bad_network_is_one_line_naming_the_key_and_exit_code_2(tmp_path, capsys, text, options, expected):
    path = tmp_path / "experiment.toml"
    path.write_text(text)
    arguments = [item for option in options for item in ("--network", option)]
    code = main(["run", str(path), "--quiet", "--output", str(tmp_path / "out.h5"), *arguments])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert expected in err
    assert not (tmp_path / "out.h5").exists()


@pytest.mark.parametrize("path, expected", [
    ("round_trip_s=fast", "--path round_trip_s=fast: round_trip_s must be a number, not 'fast'"),
    ("0.02", "--path 0.02: give key=value pairs"),
    ("rtt=0.02", "unknown key --path.rtt; allowed: jitter_s, loss, retransmit_s, round_trip_s, seed"),
    ("lab:round_trip_s=0.02", "--path lab:round_trip_s=0.02: give the path's keys only (no module name)"),
])
def test_hybridsim_network_names_its_own_option_in_a_refusal(capsys, path, expected):
    """`hybridsim network` has --path, not --network: its one-line refusals name the option the user typed."""
    code = main(["network", "--to", "127.0.0.1:9", "--path", path])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert expected in err and "--network" not in err


def test_hybridsim_network_on_a_busy_port_says_so_and_how_to_get_a_free_one(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["network", "--to", "127.0.0.1:9", "--port", str(port), "--path", "round_trip_s=0.01"])
    assert (code, capsys.readouterr().err) == (2, f"hybridsim network: error: --port {port}: another program listens "
                                                  "there; give another port, or port 0 for a free one\n")


def test_network_on_the_command_line_replaces_the_file_s_table_and_is_stored_for_resume(tmp_path):
    path = tmp_path / "experiment.toml"
    path.write_text(LOCAL.replace('address = "local"', 'address = "local"\nnetwork = { round_trip_s = 0.06 }'))
    experiment = load_experiment(path, network=["column:round_trip_s=0.005,jitter_s=0.001,seed=3"])
    assert experiment.modules[0].network == Network(0.005, 0.001, seed=3)
    assert experiment.table["modules"][0]["network"] == {"round_trip_s": 0.005, "jitter_s": 0.001, "seed": 3}
    with pytest.raises(ExperimentError):
        load_experiment(path, network=["column:round_trip_s=0.005,jitter_s=0.01"])


def test_hybridsim_run_with_network_reports_the_path_and_its_counters(tmp_path, capsys):
    path = tmp_path / "experiment.toml"
    path.write_text(LOCAL.replace("dt = 0.01\n", "dt = 0.01\nduration = 0.1\n"))
    code = main(["run", str(path), "--json", "--output", str(tmp_path / "out.h5"),
                 "--network", "round_trip_s=0.005,jitter_s=0.001,seed=2"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0
    assert summary["network"] == {"column": "5 ms round trip ± 1 ms jitter"}
    assert summary["modules"]["column"]["network_segments"] >= 2 * summary["steps"]
    assert 1e-6 * summary["step_time_us"]["p50"] >= 0.005 - 0.002
