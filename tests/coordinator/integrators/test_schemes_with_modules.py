"""Every scheme with the module kinds it will meet: a yielding spring through a checkpoint and `resume`
(the resumed run ends as the uninterrupted one, tangent and past displacements included), a site daemon
over gRPC, and a protocol client (the `openfresco` kind against a hybridsim site's lab server)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_checkpoint
from hybridsim.coordinator.simulation import resume_run, run_experiment
from tests.coordinator.test_resume import YIELDING, aborted_at
from tests.conftest import MARTHS_DATA
from tests.interop.helpers import LINEAR, building, relative, site

SCHEMES = {
    "kr-alpha": {"kind": "kr-alpha", "rho_inf": 0.5},
    "cr": {"kind": "cr"},
    "generalized-alpha-os": {"kind": "generalized-alpha-os", "rho_inf": 0.6},
    "hht-explicit": {"kind": "hht-explicit", "alpha": -0.1, "gamma": 0.7},
    "newmark-explicit": {"kind": "newmark-explicit", "gamma": 0.55},
    "hht-fixed-iterations+bfgs": {"kind": "hht-fixed-iterations", "rho_inf": 0.7, "iterations": 3, "tangent": "bfgs"},
    "newmark-fixed-iterations": {"kind": "newmark-fixed-iterations", "iterations": 2},
    "newmark+broyden": {"kind": "newmark", "tangent": "broyden"},
}


def spring_experiment(tmp_path, name: str, integrator: dict, address: str | None = None):
    module = {"name": "column", "kind": "spring", "config": {"dofs": ["x"], **YIELDING}}
    if address:
        module["address"] = address
    return parse_experiment({
        "experiment": {"name": name, "dt": 0.005, "duration": 8.0},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0],
                      "damping": {"rayleigh": [0.3, 1e-4]}},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 0.6},
        "integrator": integrator, "modules": [module],
        "output": {"file": str(tmp_path / f"{name}.h5"), "checkpoint_every": 250},
    }, base_dir=tmp_path)


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_a_yielding_run_resumed_from_a_checkpoint_ends_as_the_uninterrupted_one(tmp_path, scheme):
    whole = run_experiment(spring_experiment(tmp_path, "whole", SCHEMES[scheme]))
    assert np.max(np.abs(whole["x"])) > 0.004  # the spring yields: its state and the scheme's both matter
    control, listener = aborted_at(1234)
    with pytest.raises(RunStopped):
        run_experiment(spring_experiment(tmp_path, "broken", SCHEMES[scheme]), control=control, listeners=[listener])
    assert read_checkpoint(tmp_path / "broken.h5").step == 1000
    resumed = resume_run(tmp_path / "broken.h5")
    assert np.array_equal(resumed.displacement, whole.displacement)


@pytest.mark.parametrize("scheme", ["kr-alpha", "hht-fixed-iterations+bfgs"])
def test_a_site_daemon_steps_as_the_module_in_process(tmp_path, scheme):
    local = run_experiment(spring_experiment(tmp_path, "local", SCHEMES[scheme]))
    remote = run_experiment(spring_experiment(tmp_path, "remote", SCHEMES[scheme], address="local"))
    assert np.array_equal(remote.displacement, local.displacement)


@pytest.mark.parametrize("scheme", ["cr", "newmark-fixed-iterations"])
def test_the_openfresco_client_steps_a_site_as_the_module_in_process(tmp_path, scheme):
    options = SCHEMES[scheme]
    table = building(tmp_path, {"kind": "linear", "config": LINEAR}, "local")
    table["integrator"] = options
    local = run_experiment(parse_experiment(table, base_dir=tmp_path))
    with site(tmp_path, "linear", LINEAR, "openfresco") as lab:
        module = {"kind": "openfresco", "address": lab.addresses["openfresco"], "deadline_s": 30.0,
                  "config": {"dofs": ["u2", "u3"], "server": "lab-server"}}
        table = building(tmp_path, module, "remote")
        table["integrator"] = options
        remote = run_experiment(parse_experiment(table, base_dir=tmp_path))
    assert relative(remote.displacement, local.displacement) < 1e-12
