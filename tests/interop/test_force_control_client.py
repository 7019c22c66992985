"""OpenSees drives a site whose column holds its own axial load: openseespy's genericClient element for the
head's lateral DOF against `hybridsim site opensees --openfresco`, whose configuration declares the axial DOF
in force control (P = 1.5 MN, P-Delta); against one OpenSees model with the gravity stage then the transient."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hybridsim.modules.opensees.monolithic import alpha_os_response
from tests.interop.helpers import port_of, site

pytestmark = pytest.mark.timeout(300)

CLIENT = Path(__file__).with_name("opensees_column_client.py")
MODEL = Path(__file__).parents[1] / "modules" / "opensees" / "models" / "gravity_column.py"
P, MASS, DT, RAYLEIGH_A = 1.5e6, 2.0e4, 0.01, 0.3


def test_a_generic_client_drives_a_column_whose_axial_force_the_site_holds(tmp_path: Path) -> None:
    t = np.arange(0.0, 3.0 + 1e-9, DT)
    ground = np.where(t <= 4 / 3, np.sin(3 * np.pi * t), 0.0)  # m/s^2, as tests/modules/opensees' force test
    shutil.copy(MODEL, tmp_path / MODEL.name)
    config = {"model": MODEL.name, "path_independent": True, "parameters": {"transformation": "PDelta"},
              "control": [{"name": "x", "node": 2, "dof": 1}],
              "force_control": [{"name": "axial", "node": 2, "dof": 2, "force": -P}],
              "openfresco": {"dt": DT}}
    with site(tmp_path, "opensees", config, "openfresco") as lab:
        args = {"port": port_of(lab.addresses["openfresco"]), "mass": MASS, "rayleigh_a": RAYLEIGH_A, "dt": DT,
                "ground": ground.tolist()}
        done = subprocess.run([sys.executable, str(CLIENT), json.dumps(args)], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        lab.wait_log(r"closed by the OpenFresco element client")
    hybrid = np.array(json.loads(done.stdout.strip().splitlines()[-1]))
    monolithic = alpha_os_response(MODEL, {"transformation": "PDelta", "top_mass": MASS, "gravity": P}, dt=DT,
                                   ground_acceleration=ground, alpha=0.0, record=[(2, 1)],
                                   rayleigh=(RAYLEIGH_A, 0.0), implicit=True, tolerance=1e-12)[:, 0]
    assert hybrid.shape == monolithic.shape
    max_rel_diff = np.abs(hybrid - monolithic).max() / np.abs(monolithic).max()
    print(f"genericClient, axial force held at the site: max_rel_diff {max_rel_diff:.2e}")
    assert max_rel_diff < 1e-6
