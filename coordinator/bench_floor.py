"""Cross-process step floors (issue 38 item 3): each step that crosses a process beside its floor, in one run.

A cross-process step cannot cost less than the work at the far end plus one round trip of its bytes on the same
kind of socket, so its floor is measured in the same run as the step:

- ``opensees_site``: the coordinator's step (restoring force at a displacement, then the commit;
  :func:`hybridsim.coordinator.bench.partition_step_us`, p50) at the maRTHS frame's upper stories
  (``examples/opensees_site_upper.toml``, 19 DOFs, elastic) as an OpenSees module in process, and as a
  ``hybridsim site opensees`` daemon over its step link and its gRPC Steps stream; floor = the in-process
  step + a raw TCP echo of the step's bytes;
- ``generic_client``: the openseespy two-storey peer (tests/interop/opensees_peer.py) per AlphaOS step
  (``ops.analyze``, mean), with local elements, with a ``genericClient`` element at a ``hybridsim site linear``
  (the same springs) and, for its first storey, at a ``hybridsim site experimental`` (one actuator, the virtual
  lab of ``examples/setups/one_actuator_site.toml``, ten control samples a step); floor = the local step + a raw
  TCP echo, and ``protocol_floor``: the local step + :data:`REPLIES` echoes, the answers genericClient waits for
  in each AlphaOS step (OpenSees' protocol, not the site's choice); ``zero_work``: the same peer against a server
  that speaks the protocol and does nothing else (:data:`ZERO_WORK_SERVER`: it reads each of the step's six
  2 KiB requests, re-arms TCP_QUICKACK as the site must for OpenSees' Nagle-on socket, answers the three that
  wait with zeros), the protocol's own floor in this run.

- ``marths_loop``: the maRTHS benchmark loop per 1024 Hz tick in process (after a first run's one-time work) and
  with its experimental site and plant as daemons (the loop alone, on the step links: each tick crosses two
  hops, loop to site and site to plant); floor = the in-process tick + two raw TCP echoes, ``chain_floor`` = the
  in-process tick + one round trip through a relay process to an echo (:data:`hybridsim.coordinator.bench.TCP_RELAY`: the same three processes
  and four wake-ups a tick, no work).

Each ``over_floor`` is a step over its floor.  ``python benchmarks/step_floors.py`` prints them; `hybridsim bench`
has them as ``step_floors``.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from hybridsim.coordinator.bench import EXAMPLES, partition_step_us, tcp_echo_us

PEER = EXAMPLES.parent / "tests" / "interop" / "opensees_peer.py"
TWO_STOREYS = {"dofs": ["u2", "u3"], "stiffness": [[7.0e5, -3.0e5], [-3.0e5, 3.0e5]]}
"""the peer's springs (k1 = 4e5, k2 = 3e5 N/m) as a linear site"""
REPLIES = 3
"""requests a genericClient waits on per AlphaOS step of the peer: getDamp twice (the damping the element
adds, asked by the integrator's residual and its effective matrix) and getForce; its two setTrialResponse
(the same trial twice) and its commitState are sent without an answer"""


ZERO_WORK_SERVER = """
import socket, struct, sys
quickack = getattr(socket, "TCP_QUICKACK", None)
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
connection, _ = server.accept()
connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
def fill(view):
    got = 0
    while got < len(view):
        n = connection.recv_into(view[got:])
        if quickack is not None:
            connection.setsockopt(socket.IPPROTO_TCP, quickack, 1)
        if not n:
            return False
        got += n
    return True
sizes = bytearray(44)
fill(memoryview(sizes))
message = bytearray(8 * struct.unpack_from("=11i", sizes)[10])
reply = bytes(len(message))
while fill(memoryview(message)):
    action = struct.unpack_from("=d", message)[0]
    if 6 <= action <= 15:
        connection.sendall(reply)
    elif action >= 98:
        break
"""
"""a SimApp element server that does no work: requests 6-15 (those a client waits on) answered with zeros"""


def start_site(kind: str, config: dict[str, Any], folder: Path,
               options: tuple[str, ...] = ("--openfresco", "127.0.0.1:0")) -> tuple[subprocess.Popen, dict[str, str]]:
    """``hybridsim site KIND`` serving ``config`` with ``options``; its process and its servers' addresses by
    name (``module``, ``openfresco``, ``simcor``, ...), read from its first line."""
    path = folder / f"site{len(list(folder.iterdir()))}.json"
    path.write_text(json.dumps(config))
    process = subprocess.Popen([sys.executable, "-m", "hybridsim", "site", kind, "--config", str(path), "--base-dir",
                                str(folder), "--listen", "127.0.0.1:0", *options], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    ready, _, _ = select.select([process.stdout], [], [], 120.0)
    line = process.stdout.readline() if ready else ""  # type: ignore[union-attr]
    if "serving" not in line:
        process.kill()
        raise RuntimeError(f"hybridsim site {kind} did not start")
    return process, dict(re.findall(r"(\w+) on (127\.0\.0\.1:\d+)", line))


def zero_work_step_us(served: str, steps: int) -> float:
    """The openseespy peer's genericClient step (us) against :data:`ZERO_WORK_SERVER` standing for ``served``."""
    server = subprocess.Popen([sys.executable, "-c", ZERO_WORK_SERVER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())  # type: ignore[union-attr]
        return peer_step_us({"element": "genericClient", "port": port, "served": served, "steps": steps})
    finally:
        server.kill()
        server.wait()


def peer_step_us(args: dict[str, Any]) -> float:
    """The openseespy peer's mean analyze step (us) with ``args`` (tests/interop/opensees_peer.py's JSON)."""
    done = subprocess.run([sys.executable, str(PEER), json.dumps({"integrator": "alpha-os", **args})],
                          capture_output=True, text=True, timeout=600, check=False)
    found = re.search(r"analysis: ([\d.]+) s for (\d+) steps", done.stderr)
    if found is None:
        raise RuntimeError(f"the openseespy peer failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return 1e6 * float(found.group(1)) / int(found.group(2))


def opensees_site(calls: int) -> dict[str, float]:
    """The OpenSees site's step in process, over its daemon's step link and gRPC stream, and its floor (us)."""
    from hybridsim.modules.registry import build_module
    from hybridsim.wire.daemons import LocalDaemon
    from hybridsim.wire.remote import RemoteModule

    config = tomllib.loads((EXAMPLES / "opensees_site_upper.toml").read_text())
    figures = {"in_process_us": partition_step_us([build_module("opensees", config, EXAMPLES)], calls)}
    with LocalDaemon("opensees", config, base_dir=EXAMPLES, name="upper", start_timeout_s=120) as daemon:
        for transport in ("link", "stream"):
            remote = RemoteModule(daemon.address, name="upper", transport=transport)  # type: ignore[arg-type]
            try:
                figures[f"{transport}_us"] = partition_step_us([remote], calls)
            finally:
                remote.disconnect()
    figures["tcp_echo_us"] = tcp_echo_us(calls)
    figures["floor_us"] = figures["in_process_us"] + figures["tcp_echo_us"]
    figures["over_floor"] = figures["link_us"] / figures["floor_us"]
    return figures


def generic_client(folder: Path, steps: int) -> dict[str, float]:
    """The openseespy peer's AlphaOS step with local elements and with a genericClient at a linear and at an
    experimental site, and its floor (us)."""
    lab = tomllib.loads((EXAMPLES / "setups" / "one_actuator_site.toml").read_text())
    lab["setup"]["dof"] = "u2"
    figures = {"local_us": peer_step_us({"element": "local", "steps": steps})}
    for key, kind, config, served in (("linear_site_us", "linear", TWO_STOREYS, "both"),
                                      ("experimental_site_us", "experimental", lab, "storey1")):
        process, addresses = start_site(kind, config, folder)
        try:
            port = int(addresses["openfresco"].rpartition(":")[2])
            figures[key] = peer_step_us({"element": "genericClient", "port": port, "served": served, "steps": steps})
        finally:
            process.terminate()
            process.wait(10)
        figures[f"{kind}_zero_work_us"] = zero_work_step_us(served, steps)
    figures["tcp_echo_us"] = tcp_echo_us(2000)
    figures["floor_us"] = figures["local_us"] + figures["tcp_echo_us"]
    figures["protocol_floor_us"] = figures["local_us"] + REPLIES * figures["tcp_echo_us"]
    for site in ("linear", "experimental"):
        figures[f"{site}_over_floor"] = figures[f"{site}_site_us"] / figures["floor_us"]
        figures[f"{site}_over_protocol_floor"] = figures[f"{site}_site_us"] / figures["protocol_floor_us"]
        figures[f"{site}_over_zero_work"] = figures[f"{site}_site_us"] / figures[f"{site}_zero_work_us"]
    return figures


def marths_loop(duration: float) -> dict[str, float]:
    """The maRTHS loop's tick over ``duration`` s of record in process and on daemons, and its floor (us)."""
    import time

    from hybridsim.coordinator.problems.marths import loop
    from hybridsim.coordinator.problems.marths.daemons import run_on_daemons

    spec = loop.RunSpec(duration=duration)
    loop.run(loop.RunSpec(duration=1.0))  # the one-time work: record, reference run, kernels
    start = time.perf_counter()
    loop.run(spec)
    figures = {"in_process_us": 1e6 * (time.perf_counter() - start) / spec.ticks()}
    timings: dict[str, float] = {}
    run_on_daemons(spec, transport="link", timings=timings)
    figures["daemons_us"] = 1e6 * timings["loop_s"] / spec.ticks()
    figures["tcp_echo_us"] = tcp_echo_us(2000)
    figures["floor_us"] = figures["in_process_us"] + 2 * figures["tcp_echo_us"]
    figures["over_floor"] = figures["daemons_us"] / figures["floor_us"]
    figures["relayed_echo_us"] = tcp_echo_us(2000, relayed=True)
    figures["chain_floor_us"] = figures["in_process_us"] + figures["relayed_echo_us"]
    figures["over_chain_floor"] = figures["daemons_us"] / figures["chain_floor_us"]
    return figures


def floor_figures(calls: int = 2000, steps: int = 2000, duration: float = 10.0) -> dict[str, Any]:
    """The three paths beside their floors, in this order, with the load average before and after."""
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="hybridsim-floors-") as folder:
        figures = {"opensees_site": opensees_site(calls), "generic_client": generic_client(Path(folder), steps),
                   "marths_loop": marths_loop(duration)}
    return {**figures, "load_average": [load, os.getloadavg()]}


def format_floors(figures: dict[str, Any]) -> list[str]:
    """:func:`floor_figures` in lines."""
    site, client = figures["opensees_site"], figures["generic_client"]
    return [f"OpenSees site (19 DOFs) step p50: in process {site['in_process_us']:.0f} us, daemon step link "
            f"{site['link_us']:.0f} us, gRPC stream {site['stream_us']:.0f} us; floor {site['floor_us']:.0f} us "
            f"(+ raw TCP echo {site['tcp_echo_us']:.0f} us): link / floor {site['over_floor']:.2f}",
            f"openseespy AlphaOS step (mean): local elements {client['local_us']:.0f} us, genericClient at a linear "
            f"site {client['linear_site_us']:.0f} us, at an experimental site {client['experimental_site_us']:.0f} "
            f"us; floor {client['floor_us']:.0f} us (protocol's floor, {REPLIES} answers a step: "
            f"{client['protocol_floor_us']:.0f} us; a server that does no work: {client['linear_zero_work_us']:.0f} "
            f"and {client['experimental_zero_work_us']:.0f} us): linear / floor {client['linear_over_floor']:.2f} "
            f"(/ protocol's {client['linear_over_protocol_floor']:.2f}, / no work "
            f"{client['linear_over_zero_work']:.2f}), experimental / floor {client['experimental_over_floor']:.2f} "
            f"(/ protocol's {client['experimental_over_protocol_floor']:.2f}, / no work "
            f"{client['experimental_over_zero_work']:.2f})",
            f"maRTHS loop per 1024 Hz tick: in process {figures['marths_loop']['in_process_us']:.0f} us, site and "
            f"plant as daemons {figures['marths_loop']['daemons_us']:.0f} us; floor "
            f"{figures['marths_loop']['floor_us']:.0f} us (+ two echoes): daemons / floor "
            f"{figures['marths_loop']['over_floor']:.2f}; through a relay to an echo (three processes) "
            f"{figures['marths_loop']['relayed_echo_us']:.0f} us, chain floor {figures['marths_loop']['chain_floor_us']:.0f}"
            f" us: daemons / chain floor {figures['marths_loop']['over_chain_floor']:.2f}",
            "load average (1, 5, 15 min) before / after: " + " / ".join(
                ", ".join(f"{v:.2f}" for v in load) for load in figures["load_average"])]
