"""Force commands over UI-SIMCOR's LabView1 protocol: a control point whose axis maps the DOF an `opensees` site
declares force-controlled commands its force; the lateral force read back equals OpenSees' own (the same column
with the axial load by its gravity stage and the head's displacement by an sp constraint: the oracle of
test_force_commands); a force beyond the declared limit ends the session, a force at a displacement-controlled
axis is answered NOT OK and the session goes on.  From `hybridsim run`, a `simcor` module whose `force_control`
commands the axial load every step gives the in-process `opensees` module holding that load itself (whose
equality with one OpenSees model's gravity stage then transient is tests/modules/opensees/test_force_control.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from tests.interop.helpers import relative, site
from tests.interop.test_force_commands import MODEL, D, P, _config, lateral_force
from tests.interop.test_simcor import Client, values
from tests.modules.opensees.test_force_control import DT, MASS, RAYLEIGH_A, _record

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


def column(tmp_path: Path, module: dict, name: str) -> dict:
    """The column's head (x, its mass and damping) under the pulse, alpha-OS (one evaluation a step: the protocol
    has no revert)."""
    return {"experiment": {"name": name, "dt": DT},
            "structure": {"dofs": ["x"], "mass_diagonal": [MASS], "damping": {"rayleigh": [RAYLEIGH_A, 0.0]},
                          "influence": [1.0]},
            "ground_motion": {"file": str(tmp_path / "pulse.csv")}, "integrator": {"kind": "alpha-os"},
            "modules": [{"name": "column", **module}], "output": {"file": str(tmp_path / f"{name}.h5")}}


def test_a_simcor_module_commanding_the_axial_load_equals_the_module_holding_it_in_process(tmp_path: Path):
    _record(tmp_path)
    shutil.copy(MODEL, tmp_path / MODEL.name)
    local = run_experiment(parse_experiment(column(tmp_path, {"kind": "opensees", "config": _config()}, "local"),
                                            base_dir=tmp_path))
    without = {key: value for key, value in _config().items() if key != "force_control"}  # axial DOF free, unloaded
    no_load = run_experiment(parse_experiment(column(tmp_path, {"kind": "opensees", "config": without}, "no-load"),
                                              base_dir=tmp_path))
    served = _config()
    served["force_control"][0]["force"] = -0.1 * P  # the site's own target: the client's command must replace it
    with site(tmp_path, "opensees", {**served, "simcor": {"control_points": POINTS}}, "simcor") as lab:
        module = {"kind": "simcor", "address": lab.addresses["simcor"],
                  "config": {"dofs": ["x"], "control_points": POINTS, "force_control": {"axial": -P}}}
        remote = run_experiment(parse_experiment(column(tmp_path, module, "simcor"), base_dir=tmp_path))
    figure = relative(remote.displacement, local.displacement)
    print(f"simcor module commanding the axial load vs the in-process module: {figure:.2e}")
    assert figure < 1e-12
    assert relative(no_load.displacement, local.displacement) > 0.05  # the axial load matters (P-Delta)
