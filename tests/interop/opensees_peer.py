"""An openseespy process for the interop tests (one model per process): a two-storey shear building.

    python opensees_peer.py JSON

JSON (or @FILE): {"element": "local" | "genericClient" | "adapter" | "matrices", "port": P, "integrator": "alpha-os" |
"newmark" | "hht" | "generalized-alpha" (with "alpha": alpha_F, and "alpha_m"),
"law": "elastic" | "steel01" (the first storey's), "served": "both" | "storey1" (what a genericClient stands for),
"steps": N, "penalty": kp (adapter)}.  ``local`` and ``genericClient`` run the transient analysis
and print the floor displacements as one JSON line; ``adapter`` serves the storey springs to an
``ECSimAdapter``-style client (hybridsim's ``openfresco`` module kind) until the client says DIE.
The numbers (SI): storey stiffness k1 = 4e5, k2 = 3e5 N/m, floor masses 100, 80 kg; ground motion a sine
of 2 m/s^2 at 2 Hz for 1 s then free vibration; mass-proportional damping alphaM = 0.5 /s.
"""

import json
import math
import sys
import time

import openseespy.opensees as ops

K1, K2, M1, M2, ALPHA_M, DT = 4.0e5, 3.0e5, 100.0, 80.0, 0.5, 0.01
FY, B = 300.0, 0.05  # Steel01: yield force (N) and hardening ratio of the first storey


def ground(steps: int) -> list[float]:
    return [2.0 * math.sin(2 * math.pi * 2.0 * k * DT) if k * DT <= 1.0 else 0.0 for k in range(steps + 1)]


def springs(args: dict) -> None:
    if args.get("law") == "steel01":
        ops.uniaxialMaterial("Steel01", 1, FY, K1, B)
    else:
        ops.uniaxialMaterial("Elastic", 1, K1)
    ops.uniaxialMaterial("Elastic", 2, K2)
    ops.element("zeroLength", 1, 1, 2, "-mat", 1, "-dir", 1)
    ops.element("zeroLength", 2, 2, 3, "-mat", 2, "-dir", 1)


def building(args: dict) -> None:
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(1, 0.0)
    ops.node(2, 0.0, "-mass", M1)
    ops.node(3, 0.0, "-mass", M2)
    ops.fix(1, 1)
    if args["element"] != "genericClient":
        springs(args)
    elif args.get("served") == "storey1":  # the first storey at the site, the second one here
        ops.element("genericClient", 1, "-node", 2, "-dof", 1, "-server", args["port"], "127.0.0.1")
        ops.uniaxialMaterial("Elastic", 2, K2)
        ops.element("zeroLength", 2, 2, 3, "-mat", 2, "-dir", 1)
    else:  # both storeys at the site
        ops.element("genericClient", 1, "-node", 2, 3, "-dof", 1, "-dof", 1, "-server", args["port"], "127.0.0.1")


def transient(args: dict) -> None:
    building(args)
    steps = args["steps"]
    ops.timeSeries("Path", 1, "-dt", DT, "-values", *ground(steps))
    ops.pattern("UniformExcitation", 1, 1, "-accel", 1)
    ops.rayleigh(ALPHA_M, 0.0, 0.0, 0.0)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    if args["integrator"] == "alpha-os":
        ops.test("NormDispIncr", 1e-12, 10)
        ops.algorithm("Linear", "-initial")  # alpha-OS proper: the initial stiffness in the effective matrix
        ops.integrator("AlphaOS", args.get("alpha", 1.0))
    elif args["integrator"] in ("hht", "generalized-alpha"):  # implicit, evaluated at t_n + alpha_F dt
        ops.test("NormDispIncr", 1e-12, 50)
        ops.algorithm("Newton")
        ops.integrator(*(("HHT", args["alpha"]) if args["integrator"] == "hht" else
                         ("GeneralizedAlpha", args["alpha_m"], args["alpha"])))
    else:
        ops.test("NormDispIncr", 1e-12, 50)
        ops.algorithm("Newton")
        ops.integrator("Newmark", 0.5, 0.25)
    ops.analysis("Transient")
    history = []
    start = time.perf_counter()
    for _ in range(steps):
        if ops.analyze(1, DT) != 0:
            break
        history.append([ops.nodeDisp(2, 1), ops.nodeDisp(3, 1)])
    print(f"analysis: {time.perf_counter() - start:.6f} s for {len(history)} steps", file=sys.stderr, flush=True)
    print(json.dumps(history), flush=True)
    ops.wipe()  # a genericClient says DIE from its destructor


def matrix_model(args: dict) -> None:
    """A linear model given by its matrices over one-DOF nodes (``stiffness`` as springs between the nodes and to
    the ground, the diagonal of ``mass`` at the nodes) loaded by ``load`` times the ground acceleration
    ``ground`` (m/s^2, every ``dt`` s), whose DOFs are all a genericClient's: OpenSees drives a site with it
    under AlphaOS and prints the DOFs' displacements."""
    k, m = args["stiffness"], args["mass"]
    n = len(k)
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(n + 1, 0.0)
    ops.fix(n + 1, 1)
    for i in range(n):
        ops.node(i + 1, 0.0, "-mass", m[i][i])
    springs = [(i, j, -k[i][j]) for i in range(n) for j in range(i + 1, n)]
    springs += [(i, n, sum(k[i])) for i in range(n)]  # to the ground: the row sums
    for tag, (i, j, stiffness) in enumerate(springs, start=1):
        ops.uniaxialMaterial("Elastic", 100 + tag, stiffness)
        ops.element("zeroLength", 100 + tag, j + 1, i + 1, "-mat", 100 + tag, "-dir", 1, "-doRayleigh", 0)
    nodes = list(range(1, n + 1))
    ops.element("genericClient", 1, "-node", *nodes, *sum((["-dof", 1] for _ in nodes), []), "-server",
                args["port"], "127.0.0.1")
    ops.timeSeries("Path", 1, "-dt", args["dt"], "-values", *args["ground"])
    ops.pattern("Plain", 1, 1)
    for i in range(n):
        ops.load(i + 1, -args["load"][i])
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    ops.test("NormDispIncr", 1e-12, 10)
    ops.algorithm("Linear", "-initial")
    ops.integrator("AlphaOS", 1.0)
    ops.analysis("Transient")
    history = []
    for _ in range(len(args["ground"]) - 1):
        if ops.analyze(1, args["dt"]) != 0:
            break
        history.append([ops.nodeDisp(i + 1, 1) for i in range(n)])
    print(json.dumps(history), flush=True)
    ops.wipe()


def adapter(args: dict) -> None:
    """The storey springs behind an adapter element at floors 2 and 3, driven by a client until it says DIE."""
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(1, 0.0)
    ops.node(2, 0.0)
    ops.node(3, 0.0)
    ops.fix(1, 1)
    springs(args)
    kp = args["penalty"]
    ops.element("adapter", 3, "-node", 2, 3, "-dof", 1, "-dof", 1, "-stif", kp, 0.0, 0.0, kp, args["port"])
    ops.timeSeries("Linear", 1)
    ops.pattern("Plain", 1, 1)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    ops.test("NormDispIncr", 1e-14, 20)
    ops.algorithm("Newton")
    ops.integrator("LoadControl", 1.0)
    ops.analysis("Static")
    print("adapter ready", flush=True)
    while ops.analyze(1) == 0:  # the adapter element ends the process when the client says DIE
        pass


if __name__ == "__main__":
    arguments = json.loads(sys.argv[1] if not sys.argv[1].startswith("@") else open(sys.argv[1][1:]).read())
    {"adapter": adapter, "matrices": matrix_model}.get(arguments["element"], transient)(arguments)
