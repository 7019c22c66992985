"""The soil block of ssi_model.py as an OpenSees program of its own, served by OpenSees' ``adapter`` element at
the three surface nodes under the footing (x, y each) to hybridsim's ``openfresco`` kind until it says DIE.

    python soil_adapter.py PORT [PENALTY]
"""

import sys
from pathlib import Path

import openseespy.opensees as ops

sys.path.insert(0, str(Path(__file__).parent))
import ssi_model  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "bridge"))
from adapter_pier import analyse  # noqa: E402

if __name__ == "__main__":
    port, penalty = int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 1.0e15
    ops.wipe()
    ssi_model.build(ops, part="soil")
    nodes = [ssi_model.soil_node(x, ssi_model.DEPTH) for x in ssi_model.FOOTING]
    n = 2 * len(nodes)
    stiffness = [penalty if i == j else 0.0 for i in range(n) for j in range(n)]
    ops.element("adapter", 900, "-node", *nodes, *sum((["-dof", 1, 2] for _ in nodes), []), "-stif", *stiffness, port)
    analyse(ops)
