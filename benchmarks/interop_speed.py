"""Round trip per step over the labs' protocols beside gRPC and the step link (docs/wire_speed.md).

    python benchmarks/interop_speed.py [--calls 2000] [--json]

One `hybridsim site linear` process (a 10-DOF spring chain) serves gRPC, the step link, the SimApp
protocol (--openfresco) and UI-SIMCOR's (--simcor, one control point per DOF).  The coordinator's step
(restoring force at a displacement, then the commit; hybridsim.coordinator.bench.partition_step_us, p50
of ``--calls`` steps after a warm-up) is timed through each: RemoteModule over the gRPC Steps stream and
over the step link, the `openfresco` kind as an element client and as a lab client, the `simcor` kind
with LabView1 and LabView2.  Then OpenSees' side: an openseespy model (2 DOFs) with a genericClient
element at a 2-DOF site against the same model with local elements, per alpha-OS step.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
from pathlib import Path

from hybridsim.coordinator.bench import SITE_DOFS, chain_config, partition_step_us
from hybridsim.coordinator.bench_floor import TWO_STOREYS, peer_step_us, start_site
from hybridsim.modules.registry import build_module
from hybridsim.wire.remote import RemoteModule

SERVERS = ("--link-listen", "127.0.0.1:0", "--openfresco", "127.0.0.1:0", "--simcor", "127.0.0.1:0")


def step_figures(calls: int, folder: Path) -> dict[str, float]:
    config = chain_config(0)
    names = config["dofs"]
    points = {f"MDL-00-{i + 1:02d}": {"x": name} for i, name in enumerate(names)}
    process, addresses = start_site("linear", {**config, "simcor": {"control_points": points}}, folder, SERVERS)
    protocol2 = {**config, "simcor": {"control_points": points, "protocol": "LabView2"}}
    process2, addresses2 = start_site("linear", protocol2, folder, SERVERS)
    try:
        modules = {
            "gRPC Steps stream": lambda: RemoteModule(addresses["module"], transport="stream"),
            "step link": lambda: RemoteModule(addresses["module"], transport="link"),
            "SimApp element client (openfresco elem-server)": lambda: build_module("openfresco", {
                "address": addresses["openfresco"], "dofs": names, "server": "elem-server"}),
            "SimApp lab client (openfresco lab-server)": lambda: build_module("openfresco", {
                "address": addresses["openfresco"], "dofs": names, "server": "lab-server"}),
            "UI-SIMCOR LabView1 (simcor)": lambda: build_module("simcor", {
                "address": addresses["simcor"], "dofs": names, "control_points": points}),
            "UI-SIMCOR LabView2 (simcor)": lambda: build_module("simcor", {
                "address": addresses2["simcor"], "dofs": names, "control_points": points, "protocol": "LabView2"}),
        }
        return {what: partition_step_us([make()], calls) for what, make in modules.items()}
    finally:
        for p in (process, process2):
            p.terminate()
            p.wait(10)


def opensees_figures(folder: Path, steps: int = 2000) -> dict[str, float]:
    """Per alpha-OS step of the openseespy peer: genericClient at a hybridsim site, and local elements (us)."""
    config = {**TWO_STOREYS, "simcor": {"control_points": {"MDL-00-01": {"x": "u2"}, "MDL-00-02": {"x": "u3"}}}}
    process, addresses = start_site("linear", config, folder, SERVERS)
    try:
        port = int(addresses["openfresco"].rpartition(":")[2])
        return {"genericClient at a hybridsim site": peer_step_us({"element": "genericClient", "port": port,
                                                                   "steps": steps}),
                "the same model with local elements": peer_step_us({"element": "local", "steps": steps})}
    finally:
        process.terminate()
        process.wait(10)


def without_quickack_us(steps: int = 100) -> float:
    """The genericClient's alpha-OS step at a site whose SimApp server does not re-arm TCP_QUICKACK (us): the
    site (in this process) answers at once, but the client's next request waits for a delayed ACK."""
    from hybridsim.wire.protocols import base
    from hybridsim.wire.protocols.openfresco.server import SimAppServer
    from hybridsim.wire.server import SiteServer

    rearm, base.quickack = base.quickack, lambda connection: None
    site = SiteServer(lambda: build_module("linear", TWO_STOREYS), "no-quickack", link_listen=None)
    lab = SimAppServer(site.servicer, "127.0.0.1:0")
    try:
        return peer_step_us({"element": "genericClient", "port": lab.port, "steps": steps})
    finally:
        base.quickack = rearm
        lab.stop()
        site.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        steps = step_figures(args.calls, Path(folder))
        opensees = opensees_figures(Path(folder))
    opensees["genericClient, the site not re-arming TCP_QUICKACK"] = without_quickack_us()
    if args.json:
        print(json.dumps({"machine": platform.platform(), "dofs": SITE_DOFS, "step_p50_us": steps,
                          "opensees_step_us": opensees}, indent=2))
        return
    print(f"coordinator step, one {SITE_DOFS}-DOF linear site (p50 of {args.calls}):")
    for what, us in steps.items():
        print(f"  {what:50s} {us:8.0f} us")
    print("openseespy alpha-OS step, 2 DOFs (mean):")
    for what, us in opensees.items():
        print(f"  {what:50s} {us:8.0f} us")


if __name__ == "__main__":
    main()
