"""An openseespy process whose model holds a column's head mass and a genericClient for the head's lateral DOF,
the column itself at a hybridsim site (its axial DOF force-controlled there).

    python opensees_column_client.py JSON

JSON: {"port": P, "mass": kg, "rayleigh_a": 1/s, "dt": s, "ground": [m/s^2 every dt]}; Newmark (1/2, 1/4) with
Newton to NormDispIncr 1e-12 (the element's tangent: the site's pre-test stiffness); prints the head's
displacements as one JSON line.
"""

import json
import sys

import openseespy.opensees as ops


def main(args: dict) -> None:
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(1, 0.0)
    ops.node(2, 0.0, "-mass", args["mass"])
    ops.fix(1, 1)
    ops.element("genericClient", 1, "-node", 2, "-dof", 1, "-server", args["port"], "127.0.0.1")
    ops.timeSeries("Path", 1, "-dt", args["dt"], "-values", *args["ground"])
    ops.pattern("UniformExcitation", 1, 1, "-accel", 1)
    ops.rayleigh(args["rayleigh_a"], 0.0, 0.0, 0.0)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    ops.test("NormDispIncr", 1e-12, 50)
    ops.algorithm("Newton")
    ops.integrator("Newmark", 0.5, 0.25)
    ops.analysis("Transient")
    history = [0.0]
    for _ in range(len(args["ground"]) - 1):
        if ops.analyze(1, args["dt"]) != 0:
            break
        history.append(ops.nodeDisp(2, 1))
    print(json.dumps(history), flush=True)
    ops.wipe()  # a genericClient says DIE from its destructor


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
