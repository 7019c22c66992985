"""The bridge's right pier as an OpenSees program of its own: an openseespy process whose model is served by
OpenSees' ``adapter`` element at the pier top (x, y, rotation) to an ECSimAdapter-style client (hybridsim's
``openfresco`` module kind with ``server = "adapter"``) until the client says DIE.

    python adapter_pier.py PORT [PENALTY] [PART]

PENALTY: the adapter's penalty stiffness kp (N/m and N*m/rad on the diagonal; default 1e12); PART: the part
of bridge_model.py served (default "right").  Prints "adapter ready" once listening.
"""

import sys
from pathlib import Path

import openseespy.opensees as ops

sys.path.insert(0, str(Path(__file__).parent))
import bridge_model  # noqa: E402


def serve(port: int, penalty: float, part: str = "right") -> None:
    ops.wipe()
    bridge_model.build(ops, part=part)
    top = bridge_model.TOPS[{"left": 0, "middle": 1, "right": 2}[part]]
    stiffness = [penalty if i == j else 0.0 for i in range(3) for j in range(3)]
    ops.element("adapter", 900, "-node", top, "-dof", 1, 2, 3, "-stif", *stiffness, port)
    analyse(ops)


def analyse(ops, tolerance: float = 1e-14, iterations: int = 20, algorithm: str = "Newton",
            accept: bool = False) -> None:
    """Static steps until the adapter element's client says DIE (the element then ends the process): iterations
    of ``algorithm`` (a Newton kind) to NormDispIncr <= ``tolerance`` (m), at most ``iterations`` a step;
    ``accept``: a step still above the tolerance after them is taken as it is, with OpenSees' warning (its
    test's print flag 5), instead of ending the process (an adapter element cannot revert)."""
    ops.timeSeries("Linear", 1)
    ops.pattern("Plain", 1, 1)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    ops.test("NormDispIncr", tolerance, iterations, 5 if accept else 0)
    ops.algorithm(algorithm)  # the adapter answers from its last getResistingForce: Newton re-forms it
    ops.integrator("LoadControl", 1.0)
    ops.analysis("Static")
    print("adapter ready", flush=True)
    while ops.analyze(1) == 0:
        pass


if __name__ == "__main__":
    serve(int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 1.0e12,
          sys.argv[3] if len(sys.argv) > 3 else "right")
