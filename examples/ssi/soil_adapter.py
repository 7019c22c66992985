"""The soil block of ssi_model.py as an OpenSees program of its own, served by OpenSees' ``adapter`` element at
the three surface nodes under the footing (x, y each) to hybridsim's ``openfresco`` kind until it says DIE.

    python soil_adapter.py PORT [PENALTY [LAW]]

LAW: ``elastic`` (default) or ``pimy`` (PressureIndependMultiYield, switched to its plastic stage before the
first step); each step is a static analysis with Krylov-Newton iterations to a displacement increment of
1e-11 m (the elastic soil converges in one); a step of the multi-yield soil that stalls above it (its stress
update is not smooth where the active yield surface changes: the increments stop near 1e-8 m) is taken after
100 iterations with OpenSees' warning on stderr.
"""

import sys
from pathlib import Path

import openseespy.opensees as ops

sys.path.insert(0, str(Path(__file__).parent))
import ssi_model  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "bridge"))
from adapter_pier import analyse  # noqa: E402

if __name__ == "__main__":
    port = int(sys.argv[1])
    penalty = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0e15
    law = sys.argv[3] if len(sys.argv) > 3 else "elastic"
    ops.wipe()
    ssi_model.build(ops, part="soil", law=law)
    nodes = [ssi_model.soil_node(x, ssi_model.DEPTH) for x in ssi_model.FOOTING]
    n = 2 * len(nodes)
    stiffness = [penalty if i == j else 0.0 for i in range(n) for j in range(n)]
    ops.element("adapter", 900, "-node", *nodes, *sum((["-dof", 1, 2] for _ in nodes), []), "-stif", *stiffness, port)
    analyse(ops, tolerance=1e-11, iterations=100, algorithm="KrylovNewton", accept=True)
