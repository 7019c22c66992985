"""OpenSees' integrators that evaluate the restoring force at an intermediate time (AlphaOS with numerical
damping, HHT, generalized-alpha: t_n + alpha_F dt) drive an experimental site through genericClient, and a
refused step ends the OpenSees process instead of hanging it (issue 29 item 1).

The experimental site is a virtual lab with an ideal actuator (the stroke is the command at the end of its
sample) under a one-actuator setup, its specimen the first storey's spring (k1): the `linear` site of k1 is the
same restoring force.  Both sites answer genericClient's pre-test and trials with k1 d; the experimental one
takes d through the site's unit conversions (m -> mm for the compensator -> plant units -> m, one rounding each)
and the load cell's J^T f, so the two runs differ by round-off only: a relative 1e-12 over the run bounds it with
margin (the measured differences are printed) while any step on a wrong time or trial would differ by the step's
motion, 1e-2 relative or more."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime

import numpy as np
import pytest

from tests.interop.helpers import PEER, STEPS, opensees, port_of, relative, site

pytestmark = pytest.mark.timeout(300)

K1 = 4.0e5
"""N/m: the first storey's spring (tests/interop/opensees_peer.py)"""
DT = 0.01
"""s: the peer's time step, here also the experimental site's control sample (one sample per step)"""
LINEAR_SITE = {"dofs": ["u2"], "stiffness": [[K1]]}
INTEGRATORS = {
    "AlphaOS 0.95": {"integrator": "alpha-os", "alpha": 0.95},
    "HHT 0.9": {"integrator": "hht", "alpha": 0.9},
    "GeneralizedAlpha 1.0 0.8": {"integrator": "generalized-alpha", "alpha_m": 1.0, "alpha": 0.8},
}


def experimental_site(limits: dict | None = None) -> dict:
    """The first storey at a virtual lab: one ideal actuator, the spring k1 as its specimen."""
    return {"dt": DT, "setup": {"kind": "one-actuator", "dof": "u2"}, "actuators": [{}],
            "backend": {"plant": {"dt": DT, "dofs": ["actuator_1"], "actuators": [{"model": "ideal"}],
                                  "specimen": {"kind": "linear", "stiffness": [[K1]]}}},
            **({"limits": limits} if limits else {})}


@pytest.mark.parametrize("integrator", INTEGRATORS, ids=list(INTEGRATORS))
def test_an_intermediate_time_integrator_at_an_experimental_site_equals_the_linear_site(tmp_path, integrator):
    args = {"element": "genericClient", "served": "storey1", **INTEGRATORS[integrator]}
    with site(tmp_path, "linear", LINEAR_SITE, "openfresco") as lab:
        linear = opensees({**args, "port": port_of(lab.addresses["openfresco"])})
    with site(tmp_path, "experimental", experimental_site(), "openfresco") as lab:
        hybrid = opensees({**args, "port": port_of(lab.addresses["openfresco"])})
        text = lab.wait_log(r"closed by the OpenFresco element client")
    assert hybrid.shape == linear.shape == (STEPS, 2)
    assert np.abs(linear[:, 0]).max() > 1e-3  # a response worth comparing (m)
    print(f"{integrator}: experimental vs linear site, relative difference {relative(hybrid, linear):.3g}")
    assert relative(hybrid, linear) < 1e-12
    assert "refused" not in text


@pytest.mark.parametrize("integrator", INTEGRATORS, ids=list(INTEGRATORS))
def test_a_refused_step_ends_the_opensees_process_within_a_second(tmp_path, integrator):
    """A displacement limit below the response: the step that passes it is refused; the site answers the client's
    next requests with NaN (SimApp has no error message) and OpenSees ends its analysis and exits: Newton (HHT,
    generalized-alpha) fails its convergence test at once; AlphaOS's Linear algorithm has no test, so it runs
    its remaining steps on NaN (a fraction of a millisecond each, nothing moves) to the script's end."""
    args = {"element": "genericClient", "served": "storey1", "steps": STEPS, **INTEGRATORS[integrator]}
    with site(tmp_path, "experimental", experimental_site({"displacement": 5e-4}), "openfresco") as lab:
        peer = subprocess.Popen([sys.executable, str(PEER), json.dumps({**args, "port": port_of(
            lab.addresses["openfresco"])})], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            peer.wait(timeout=60.0)
            ended = datetime.now()
            logged = re.search(r"^(\S+ \S+) .*ended after a refusal", lab.wait_log("ended after a refusal"), re.M)
            exited = (ended - datetime.strptime(logged.group(1), "%Y-%m-%d %H:%M:%S,%f")).total_seconds()
        finally:
            peer.kill()
            out, _ = peer.communicate()
    print(f"{integrator}: OpenSees exited {exited:.3f} s after the refusal")
    assert "displacement limit on DOF 'u2'" in lab.log_text()
    assert exited < 1.0
    history = np.array(json.loads(out.strip().splitlines()[-1]), float)
    assert len(history) < STEPS or np.isnan(history[-1]).all()  # ended at the refusal, or ran on NaN
    assert np.abs(history[np.isfinite(history[:, 0]), 0]).max() <= 5e-4 * (1 + 1e-9)  # nothing past the limit
