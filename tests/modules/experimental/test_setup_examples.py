"""Every example under examples/setups/ loads and runs its first 0.8 s of shaking (after the record's quiet
first 4.9 s); the numbers of the site against the numerical modules are checked in test_site_equivalence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.experimental.setups.kinds import KINDS
from tests.conftest import EXAMPLES
from tests.coordinator.test_remote_frame import shortened

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
