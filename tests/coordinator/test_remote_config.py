"""A module at an address: its config is optional; when given it must be the site's; the results file records
what the site reported.

The site is a real `hybridsim site linear` daemon whose own configuration holds k = 1.5e6 N/m.  The oscillator
(m = 1000 kg) must then be held by that k whatever the experiment says, and an experiment that claims
9.9e6 must not run (one line naming the key, exit 2): it used to run with the site's stiffness while the
results file recorded 9.9e6.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from hybridsim.coordinator.recorder import read_attributes, read_results
from hybridsim.wire.daemons import LocalDaemon
from tests.conftest import MARTHS_DATA

K_SITE = 1.5e6  # N/m
MASS = 1000.0  # kg

EXPERIMENT = """
[experiment]
name = "remote"
dt = 0.001
duration = 8.0

[structure]
dofs = ["x"]
mass_diagonal = [{mass}]
influence = [1.0]

[ground_motion]
file = "{motion}"
scale = 0.4

[pretest]
amplitude = 1e-3

[[modules]]
name = "column"
kind = "linear"
address = "{address}"
{config}

[output]
file = "{output}"
"""


@pytest.fixture(scope="module")
def site():
    with LocalDaemon("linear", {"dofs": ["x"], "stiffness": [[K_SITE]]}, name="lab-column") as daemon:
        yield daemon.start()


def run(tmp_path, address: str, config: str = "") -> subprocess.CompletedProcess:
    path = tmp_path / "remote.toml"
    path.write_text(EXPERIMENT.format(mass=MASS, motion=MARTHS_DATA / "ground_motion_elcentro.csv", address=address,
                                      config=config, output=tmp_path / "remote.h5"))
    return subprocess.run([sys.executable, "-m", "hybridsim", "run", str(path), "--json"], capture_output=True,
                          text=True, timeout=120)


def test_without_config_the_site_configuration_runs_and_is_recorded(site, tmp_path):
    done = run(tmp_path, site)
    assert done.returncode == 0, done.stderr
    stored = read_results(tmp_path / "remote.h5")
    # the pre-test measures the stiffness the site really has
    np.testing.assert_allclose(stored["model/initial_stiffness"], [[K_SITE]], rtol=1e-9)
    force, x = stored["modules/column/force"][:, 0], stored["modules/column/displacement"][:, 0]
    moving = np.abs(x) > 1e-3 * np.max(np.abs(x))
    np.testing.assert_allclose(force[moving] / x[moving], K_SITE, rtol=1e-12)  # the site's k ran
    described = json.loads(stored["attrs"]["module_descriptions"])["column"]
    assert described["config"] == {"dofs": ["x"], "stiffness": [[K_SITE]]}
    assert described["config_source"] == "site" and described["where"].startswith("daemon at 127.0.0.1:")
    assert described["dofs"] == [{"name": "x", "kind": "translation", "unit": "m", "force_unit": "N"}]
    assert described["kind"] == "linear"


def test_a_config_equal_to_the_sites_runs(site, tmp_path):
    done = run(tmp_path, site, 'config = { dofs = ["x"], stiffness = [[1500000]] }')  # an integer: the same number
    assert done.returncode == 0, done.stderr
    assert json.loads(read_attributes(tmp_path / "remote.h5")["module_descriptions"])["column"]["config"][
        "stiffness"] == [[K_SITE]]


def test_a_config_that_differs_from_the_sites_is_one_line_and_exit_2(site, tmp_path):
    done = run(tmp_path, site, 'config = { dofs = ["x"], stiffness = [[9.9e6]] }')
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "module 'column': its config differs from the configuration the site" in done.stderr
    assert "config.stiffness[0][0] is 9900000.0 here, 1500000.0 at the site" in done.stderr
    assert not (tmp_path / "remote.h5").exists()
