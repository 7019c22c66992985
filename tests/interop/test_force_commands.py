"""Force commands over SimApp (OpenFresco's ExpForceControl): a client that declares sizeCtrl force = 1 commands
the axial force of a site whose column declares its axial DOF force-controlled; a site that declares none, or a
count that differs, or a force beyond the declared limit, is refused as before.

The oracle is OpenSees itself in this process: the same column with the axial load applied by its own gravity
stage (LoadControl, loadConst), then the head's lateral displacement imposed by an sp constraint; the head's
reaction is the lateral force the site must answer."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from hybridsim.modules.opensees import domain
from hybridsim.modules.opensees.lazy import ops
from tests.interop.helpers import site
from tests.interop.test_openfresco_site import client, closed_by_site, message, receive, sizes

pytestmark = pytest.mark.timeout(120)

MODEL = Path(__file__).parents[1] / "modules" / "opensees" / "models" / "gravity_column.py"
P, D = 1.5e6, 0.02  # N, m


def lateral_force(axial: float, d: float) -> float:
    """The head's lateral reaction (N) at lateral displacement ``d`` (m) under the downward load ``axial`` (N)."""
    with domain.held("the force-command oracle"):
        domain.build_model(domain.load_builder(MODEL), {"transformation": "PDelta", "gravity": axial}, MODEL)
        ops.timeSeries("Constant", 9)
        ops.pattern("Plain", 9, 9)
        ops.sp(2, 1, d)
        ops.constraints("Transformation")
        ops.numberer("RCM")
        ops.system("BandGeneral")
        ops.test("NormDispIncr", 1e-12, 25)
        ops.algorithm("Newton")
        ops.integrator("LoadControl", 0.0)
        ops.analysis("Static")
        assert ops.analyze(1) == 0
        ops.reactions()
        return ops.nodeReaction(2, 1)


def _config(limit: float | None = None) -> dict:
    entry = {"name": "axial", "node": 2, "dof": 2, "force": -P}
    if limit is not None:
        entry["limit"] = limit
    return {"model": MODEL.name, "path_independent": True, "parameters": {"transformation": "PDelta"},
            "control": [{"name": "x", "node": 2, "dof": 1}], "force_control": [entry]}


def test_a_client_commands_the_declared_axial_force_and_reads_the_lateral_force_there(tmp_path: Path) -> None:
    shutil.copy(MODEL, tmp_path / MODEL.name)
    with site(tmp_path, "opensees", _config(limit=4 * P), "openfresco") as lab:
        with client(lab) as c:
            c.sendall(sizes(1, ctrl=(1, 0, 0, 1, 1)))
            answers = []
            for step, axial in enumerate((P, 2 * P), start=1):
                c.sendall(message([3, D, -axial, 0.01 * step]) + message([10]))
                answers.append(receive(c)[0])
                c.sendall(message([5]))
            c.sendall(message([3, D, -8 * P, 0.03]))  # beyond the declared limit: refused, then NaN
            c.sendall(message([10]))
            assert np.isnan(receive(c)[0])
            c.sendall(message([99]))
        text = lab.wait_log(r"beyond its limit")
    expected = [lateral_force(P, D), lateral_force(2 * P, D)]
    assert answers == pytest.approx(expected, rel=1e-9)
    assert abs(expected[1] - expected[0]) > 0.1 * abs(expected[0])  # the commanded force moves the answer
    assert "force command -1.2e+07 at 'axial' beyond its limit 6e+06" in text


@pytest.mark.parametrize("config, ctrl, logged", [
    ({"dofs": ["x"], "stiffness": [[1.0e6]]}, (1, 0, 0, 1, 1), "the site declares no force-controlled DOF"),
    (None, (1, 0, 0, 2, 1), "the client commands 2 forces, the site declares 1 force-controlled DOF(s)"),
])
def test_force_commands_the_site_does_not_declare_are_refused(tmp_path: Path, config, ctrl, logged) -> None:
    shutil.copy(MODEL, tmp_path / MODEL.name)
    kind = "linear" if config is not None else "opensees"
    with site(tmp_path, kind, config or _config(), "openfresco") as lab:
        with client(lab) as c:
            c.sendall(sizes(1, ctrl=ctrl))
            assert closed_by_site(c)
        assert logged in lab.wait_log("refused")
