"""Every example under examples/setups/ loads and runs its first 0.8 s of shaking (after the record's quiet
first 4.9 s); the numbers of the site against the numerical modules are checked in test_site_equivalence."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.experimental.setups.kinds import KINDS
from tests.conftest import EXAMPLES
from tests.coordinator.test_remote_frame import shortened
from tests.interop.helpers import site as site_daemon

SETUP_EXAMPLES = sorted(p for p in (EXAMPLES / "setups").glob("*.toml") if not p.stem.endswith("_site"))


def test_every_setup_kind_has_an_example_and_a_readme_line() -> None:
    readme = (EXAMPLES / "setups" / "README.md").read_text()
    kinds = set()
    for path in SETUP_EXAMPLES:
        assert f"`{path.name}`" in readme
        site = (EXAMPLES / "setups" / f"{path.stem}_site.toml").read_text()
        kinds |= {kind for kind in KINDS if f'kind = "{kind}"' in site}
    assert kinds | {"marths-coupler"} == set(KINDS)  # the coupler's example is examples/marths.toml


@pytest.mark.parametrize("path", SETUP_EXAMPLES, ids=lambda p: p.stem)
def test_a_setup_example_runs_its_first_shaking(path: Path, tmp_path: Path) -> None:
    result = run_experiment(shortened(load_experiment(path), duration_s=0.8), output=tmp_path / "out.h5")
    assert np.max(np.abs(result.displacement)) > 1e-6


def test_a_load_cell_site_through_a_plant_daemon_is_the_in_process_site(tmp_path: Path) -> None:
    """one_actuator.toml as a lab runs it: its virtual lab as a `hybridsim site plant` process on loopback and the
    site's backend its address; the same run, sample for sample, as with the lab in the site's process.  A
    daemon does not know the site's setup (its specimen table gives it) and cannot be probed before the test
    (the site table gives initial_stiffness)."""
    site = tomllib.loads((EXAMPLES / "setups" / "one_actuator_site.toml").read_text())
    plant = site["backend"]["plant"]
    plant["specimen"]["setup"] = site["setup"]
    site["initial_stiffness"] = [[4.0e5]]
    experiment = (EXAMPLES / "setups" / "one_actuator.toml").read_text().replace("one_actuator_site.toml",
                                                                                 "site.json")
    (tmp_path / "one_actuator.toml").write_text(experiment)

    def run(backend: dict) -> object:
        (tmp_path / "site.json").write_text(json.dumps({**site, "backend": backend}))
        return run_experiment(shortened(load_experiment(tmp_path / "one_actuator.toml"), duration_s=1.0),
                              output=tmp_path / "out.h5", overwrite=True)

    near = run({"plant": plant})
    with site_daemon(tmp_path, "plant", plant) as lab:
        far = run({"address": next(iter(lab.addresses.values()))})
    assert np.max(np.abs(near.displacement)) > 1e-3
    np.testing.assert_array_equal(far.displacement, near.displacement)
    np.testing.assert_array_equal(far.restoring_force, near.restoring_force)


# What a README row says its example shows, checked on the whole run: (the claim, a test of the displacements).
CLAIMS = {
    "none": ("storey drift past its 10 mm yield", lambda d: np.max(np.abs(d[:, 1] - d[:, 0])) > 0.010),
    "one_actuator": ("the column past its 8 mm yield", lambda d: np.max(np.abs(d[:, 0])) > 0.008),
    "four_actuators_3d": ("both directions at once", lambda d: min(np.max(np.abs(d[:, 0])), np.max(np.abs(d[:, 1])))
                          > 0.01),
    "loading_platform": ("six DOFs, the uncontrolled ones near zero", lambda d: np.max(np.abs(d[:, 0])) > 0.01),
}


@pytest.mark.long
@pytest.mark.parametrize("path", SETUP_EXAMPLES, ids=lambda p: p.stem)
def test_a_setup_example_runs_to_its_end(path: Path, tmp_path: Path) -> None:
    """`hybridsim run examples/setups/NAME.toml` as a new user runs it: the whole record, exit 0."""
    from hybridsim.coordinator.cli import main

    assert main(["run", str(path), "--quiet", "--output", str(tmp_path / "out.h5")]) == 0
    import h5py

    with h5py.File(tmp_path / "out.h5") as results:
        displacement = results["displacement"][:]
        assert results["time"][-1] == pytest.approx(tomllib.loads(path.read_text())["experiment"]["duration"],
                                                     abs=1e-9)
    assert np.all(np.isfinite(displacement)) and np.max(np.abs(displacement)) > 1e-3
    if path.stem in CLAIMS:
        what, holds = CLAIMS[path.stem]
        assert holds(displacement), what
