"""Force commands over UI-SIMCOR's LabView1 protocol: a control point whose axis maps the DOF an `opensees` site
declares force-controlled commands its force; the lateral force read back equals OpenSees' own (the same column
with the axial load by its gravity stage and the head's displacement by an sp constraint: the oracle of
test_force_commands); a force beyond the declared limit ends the session, a force at a displacement-controlled
axis is answered NOT OK and the session goes on."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.interop.helpers import site
from tests.interop.test_force_commands import MODEL, D, P, _config, lateral_force
from tests.interop.test_simcor import Client, values

pytestmark = pytest.mark.timeout(120)

POINTS = {"MDL-00-01": {"x": "x", "y": "axial"}}
"""the head's lateral DOF on axis x, the axial force-controlled one on axis y"""


def test_a_ui_simcor_client_commands_the_declared_axial_force_and_reads_the_lateral_force_there(tmp_path: Path):
    shutil.copy(MODEL, tmp_path / MODEL.name)
    config = {**_config(limit=4 * P), "simcor": {"control_points": POINTS}}
    with site(tmp_path, "opensees", config, "simcor") as lab:
        client = Client(lab)
        assert client.ask("open-session", "UI-SIMCOR")[0][0] == "OK"
        refused = client.ask("propose", "t0", "MDL-00-01", "x", "force", "1.0e3", "y", "force", -P)[0]
        assert refused[0] == "NOT OK" and "axis x is displacement-controlled; command displacement" in refused[3]
        read = []
        for step, axial in enumerate((P, 2 * P), start=1):
            tid = f"t{step}"
            assert client.ask("propose", tid, "MDL-00-01", "x", "displacement", f"{D:.10e}", "y", "force",
                              f"{-axial:.10e}")[0][:3] == ["OK", "0", tid]
            assert client.ask("execute", tid)[0] == ["OK", "0", tid, "execute done"]
            line = client.ask("get-control-point", tid, "MDL-00-01")[0]
            read.append(values(line[4:]))
        beyond = client.ask("propose", "t3", "MDL-00-01", "x", "displacement", D, "y", "force", -8 * P)[0]
        client.close()
        text = lab.wait_log("beyond its limit")
    expected = [lateral_force(P, D), lateral_force(2 * P, D)]
    assert [r["x force"] for r in read] == pytest.approx(expected, rel=1e-9)
    assert abs(expected[1] - expected[0]) > 0.1 * abs(expected[0])  # the commanded force moves the answer
    assert [r["x displacement"] for r in read] == [D, D] and [r["y force"] for r in read] == [-P, -2 * P]
    assert beyond[0] == "NOT OK" and "force command -1.2e+07 at 'axial' beyond its limit 6e+06" in text
