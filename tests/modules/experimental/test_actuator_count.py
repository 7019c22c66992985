"""A site table whose setup has fewer (or more) actuators than its lab's channels is refused when the experiment
is read (exit 2, one line naming both counts and the key), not at step 0 of the run (issue 29 item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridsim.coordinator.cli import main
from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import ModuleError
from tests.conftest import EXAMPLES, ROOT

SDOF = (EXAMPLES / "sdof.toml").read_text().replace("../coordinator", str(ROOT / "coordinator"))
ONE_ACTUATOR = {"dt": 0.02, "setup": {"kind": "one-actuator", "dof": "x"}, "actuators": [{}],
                "initial_stiffness": [[39478.4]]}


@pytest.mark.parametrize("backend, key", [
    ({"plant": {"dt": 0.02, "actuators": {"model": "ideal"}}}, "backend.plant.dofs"),
    ({"daemon": {"dt": 0.02, "dofs": ["a1", "a2", "a3"], "actuators": {"model": "ideal"}}}, "backend.daemon.dofs"),
    ({"generic_tcp": "127.0.0.1:1"}, "backend.channels"),
])
def test_a_lab_with_other_channels_than_the_setup_is_refused_when_the_site_is_built(backend, key) -> None:
    with pytest.raises(ModuleError, match=f"the setup has 1 actuator, the backend's lab [23] \\({key}\\)"):
        build_module("experimental", {**ONE_ACTUATOR, "backend": backend})


def test_the_run_stops_before_anything_starts_with_exit_2(tmp_path: Path, capsys) -> None:
    site = ('dt = 0.01\nsetup = { kind = "one-actuator", dof = "x" }\nactuators = [{}]\n'
            '[backend.plant]\ndt = 0.01\nactuators = { model = "ideal" }\n'
            'specimen = { kind = "linear", stiffness = [[39478.417604357434]] }\n')
    (tmp_path / "site.toml").write_text(site)
    text = SDOF.replace('kind = "linear"\nconfig = { dofs = ["x"], stiffness = [[39478.417604357434]] }',
                        'kind = "experimental"\nconfig_file = "site.toml"')
    assert 'config_file = "site.toml"' in text
    (tmp_path / "experiment.toml").write_text(text)
    code = main(["run", str(tmp_path / "experiment.toml"), "--quiet", "--output", str(tmp_path / "out.h5")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "the setup has 1 actuator, the backend's lab 2 (backend.plant.dofs)" in err
    assert not (tmp_path / "out.h5").exists()
