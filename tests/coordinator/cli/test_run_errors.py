"""`hybridsim run` refuses bad experiment files with one line naming the problem, exit code 2."""

from __future__ import annotations

import math
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.integrators import INTEGRATORS
from hybridsim.coordinator.experiment import load_experiment
from tests.conftest import EXAMPLES

BASE = (EXAMPLES / "sdof.toml").read_text()
ALPHA_OS = 'kind = "alpha-os"\nalpha = -0.05'
EXCITATION = ('[[excitation]]\nfile = "hybridsim:marths/ground_motion_elcentro.csv"\ninfluence_dofs = ["x"]\n'
              'start_s = 0.0\n')
NO_INFLUENCE = BASE.replace("influence = [1.0]\n", "")
CD_PERIOD = 2 * math.pi * math.sqrt(0.5 / 39478.417604357434)
"""s: the sdof example's period with a mass of 0.5 kg"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "experiment.toml"
    path.write_text(text)
    return path


CASES = {
    "missing key": (BASE.replace("dt = 0.01\n", ""), "missing key experiment.dt"),
    "a site's config": ((EXAMPLES / "opensees_site_upper.toml").read_text(),
                        "no [experiment] table: this is not an experiment file (a site's configuration is served "
                        "with `hybridsim site KIND --config FILE`"),
    "wrong type": (BASE.replace("dt = 0.01", 'dt = "fast"'), "experiment.dt must be a number"),
    "unknown module kind": (BASE.replace('kind = "linear"', 'kind = "lienar"'), "unknown module kind 'lienar'"),
    "DOF named twice": (BASE.replace('dofs = ["x"]\n', 'dofs = ["x", "x"]\n', 1), "DOF named twice: x"),
    "dt beyond the record": (BASE.replace("dt = 0.01", "dt = 0.05"), "larger than the record's step"),
    "non-finite number": (BASE.replace("scale = 0.4", "scale = nan"), "must be a finite number"),
    "non-finite matrix": (BASE.replace("[[39478.417604357434]]", "[[inf]]"), "must be a finite number"),
    "unknown key": (BASE.replace("[integrator]\n", "[integrator]\nalpah = 1.0\n"), "unknown key integrator.alpah"),
    "module DOF not in the structure": (BASE.replace('config = { dofs = ["x"]', 'config = { dofs = ["y"]'),
                                        "not in structure.dofs"),
    "missing record": (BASE.replace("ground_motion_elcentro.csv", "nothere.csv"), "does not exist"),
    "alpha of the wrong type": (BASE.replace("alpha = -0.05", 'alpha = "x"'), "integrator.alpha must be a number"),
    "alpha out of range": (BASE.replace("alpha = -0.05", "alpha = -0.5"), "integrator.alpha must be a number >= -0.333333 and <= 0, got -0.5"),
    "Newmark tolerance": (BASE.replace(ALPHA_OS, 'kind = "newmark"\ntolerance = 0.0'),
                          "integrator.tolerance must be a number > 0, got 0.0"),
    "Newmark iterations": (BASE.replace(ALPHA_OS, 'kind = "newmark"\nmax_iterations = 0'),
                           "integrator.max_iterations must be an integer >= 1, got 0"),
    "an option of another scheme": (BASE.replace(ALPHA_OS, 'kind = "central-difference"\nalpha = -0.05'),
                                    "unknown key integrator.alpha; allowed: kind"),
    "unknown integrator": (BASE.replace(ALPHA_OS, 'kind = "rk4"'),
                           f"integrator.kind must be one of {', '.join(map(repr, INTEGRATORS))}, got 'rk4'"),
    "negative mass": (BASE.replace("mass_diagonal = [1000.0]", "mass_diagonal = [-1000.0]"), "negative eigenvalue"),
    "a step too small": (BASE.replace("dt = 0.01", "dt = 1e-9"), "use a larger step or a shorter duration"),
    "zero duration": (BASE.replace("dt = 0.01\n", "dt = 0.01\nduration = 0.0\n"),
                      "experiment.duration must be a number > 0 (s), got 0.0"),
    "unknown pre-test key": (BASE + "\n[pretest]\namplitud = 1e-5\n", "unknown key pretest.amplitud"),
    "two damping models": (BASE.replace("damping = { rayleigh_omega", "damping = { rayleigh = [0.1, 0.0], rayleigh_omega"),
                           "not rayleigh and rayleigh_omega"),
    "bad DOF kind": (BASE.replace('config = { dofs = ["x"],', 'config = { dofs = ["x"], kinds = ["rot"],'),
                     "kinds in module 'column' (config modules[0].config) must be a non-empty list of strings each "
                     "one of 'translation', 'rotation', got ['rot']"),
    "evaluation without a site": (BASE + '\n[evaluation]\nproblem = "marths"\n', "missing key evaluation.site"),
    "unknown transport": (BASE.replace('kind = "linear"', 'kind = "linear"\naddress = "local"\ntransport = "udp"'),
                          "modules[0].transport must be one of 'auto', 'stream', 'unary', 'link', got 'udp'"),
    "address without a port": (BASE.replace('kind = "linear"', 'kind = "linear"\naddress = "lab.example.org"'),
                               'modules[0].address must be HOST:PORT (e.g. lab.example.org:50051) or "local", got '
                               "'lab.example.org'"),
    "transport in process": (BASE.replace('kind = "linear"', 'kind = "linear"\ntransport = "stream"'),
                             "a module in process has no transport"),
    # declared in the experiment's schema (coordinator/experiment_schema.py), each checked there alone
    "influence twice": (BASE.replace("influence = [1.0]", 'influence = [1.0]\ninfluence_dofs = ["x"]'),
                        "give at most one of influence or influence_dofs in structure, not influence and "
                        "influence_dofs"),
    "no influence": (BASE.replace("influence = [1.0]\n", ""), "structure: give exactly one of influence or "
                     "influence_dofs (where the ground motion shakes the structure)"),
    "both ground motion and excitation": (BASE + EXCITATION, "give at most one of ground_motion or excitation, not "
                                          "ground_motion and excitation"),
    "no excitation": (BASE[:BASE.index("[ground_motion]")] + BASE[BASE.index("[integrator]"):],
                      "no excitation: give [ground_motion] or [[excitation]] (or [[stages]] without a dynamic stage)"),
    "a stage of no kind": (BASE + '[[stages]]\nname = "gravity"\n',
                           "missing key stages[0].kind; choose one of static, dynamic, quasi-static, free-vibration"),
    "a static stage with nothing to apply": (BASE + '[[stages]]\nkind = "static"\n',
                                             "stages[0]: give forces or displacements (e.g. forces = { x = -1.0e3 })"),
    "a stage's force at an unknown DOF": (BASE + '[[stages]]\nkind = "static"\nforces = { y = 1.0 }\n',
                                          "stages[0].forces.y: unknown DOF; it must be in structure.dofs (x)"),
    "a quasi-static force protocol": (BASE + '[[stages]]\nkind = "quasi-static"\ndof = "x"\ncontrol = "force"\n'
                                      'protocol = { yield_displacement = 0.01 }\n',
                                      "stages[0].protocol is a displacement ladder"),
    "excitation beside structure.influence": (
        BASE[:BASE.index("[ground_motion]")] + EXCITATION + BASE[BASE.index("[integrator]"):],
        "structure.influence: with [[excitation]] each component gives its own influence"),
    "a component's start between steps": (
        NO_INFLUENCE[:NO_INFLUENCE.index("[ground_motion]")] + EXCITATION.replace("start_s = 0.0", "start_s = 0.015")
        + NO_INFLUENCE[NO_INFLUENCE.index("[integrator]"):],
        "starts at 0.015 s, not a whole number of steps of 0.01 s: give start_s = 0.02 (or 0.03)"),
    "zeta without frequencies": (BASE.replace("rayleigh_omega = [6.283185307179586, 62.83185307179586], ", ""),
                                 "structure.damping: rayleigh_omega and zeta go together: give both or neither"),
    "same frequency twice": (BASE.replace("62.83185307179586]", "6.283185307179586]"),
                             "structure.damping.rayleigh_omega needs two distinct frequencies (rad/s)"),
    "unknown record units": (BASE.replace("scale = 0.4", 'scale = 0.4\nunits = "gal"'),
                             "ground_motion.units must be one of 'm/s^2', 'm/s2', 'g', 'rad/s^2', got 'gal'"),
    "scale and pga": (BASE.replace("scale = 0.4", "scale = 0.4\npga = 3.0"),
                      "give at most one of scale or pga in ground_motion, not scale and pga"),
    "negative checkpoint interval": (BASE + "checkpoint_every = -1\n",
                                     "output.checkpoint_every must be an integer >= 0 (steps), got -1"),
    "pretest not a table": (BASE.replace("[experiment]", "pretest = 1e-5\n[experiment]"),
                            "pretest must be a table ([pretest]), got 1e-05"),
    "non-finite number inside a module's config": (
        BASE.replace('kind = "linear"', 'kind = "opensees"').replace(
            'config = { dofs = ["x"], stiffness = [[39478.417604357434]] }',
            'config = { model = "m.py", build = { k = nan } }'),
        "modules[0].config.build.k must be a finite number, got nan"),
    "evaluation scale": (BASE + '\n[evaluation]\nproblem = "marths"\nsite = "column"\nscale = 0.0\n',
                         "evaluation.scale must be a number > 0, got 0.0"),
    "a module's name twice": (BASE + '\n[[modules]]\nname = "column"\nkind = "linear"\nconfig = {}\n',
                              "modules[1].name: module name 'column' is used twice"),
    "a specimen scale of zero": (BASE.replace('kind = "linear"', 'kind = "linear"\nscale = { length = 0.0 }'),
                                 "modules[0].scale.length must be a number > 0, got 0.0"),
    "tls with a cert and no key": (BASE.replace('kind = "linear"', 'kind = "linear"\naddress = "lab.example.org:5"\n'
                                                'tls = { ca = "ca.crt", cert = "c.crt" }'),
                                   "modules[0].tls: cert and key go together: give both or neither"),
    # half a kilogram typed for 1000 kg: T = 2 pi sqrt(m/k) = 0.02236 s, central difference needs dt <= T/pi
    "central difference past its limit": (
        BASE.replace(ALPHA_OS, 'kind = "central-difference"').replace("[1000.0]", "[0.5]"),
        f"central difference is unstable at dt = 0.01 s: the shortest period T = {CD_PERIOD:.4g} s (omega = "
        f"{2 * math.pi / CD_PERIOD:.4g} rad/s) needs dt <= 2/omega = {CD_PERIOD / math.pi:.4g} s"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_experiment_gives_one_line_and_exit_code_2(tmp_path, capsys, case):
    text, expected = CASES[case]
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        pytest.fail("the test case must be valid TOML so that validation, not parsing, catches it")
    code = main(["run", str(write(tmp_path, text)), "--quiet", "--output", str(tmp_path / "out.h5")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert expected in err


def test_a_site_s_json_configuration_given_to_run_is_named_as_such(tmp_path, capsys):
    path = tmp_path / "site.json"
    path.write_text('{"dofs": ["x"], "stiffness": [[1.0]]}')
    assert main(["run", str(path)]) == 2
    assert capsys.readouterr().err == (f"hybridsim run: error: {path} is JSON: an experiment is a TOML file (a site's "
                                       "configuration, TOML or JSON, is served with `hybridsim site KIND --config "
                                       "FILE`)\n")


def test_the_console_command_exits_with_code_2(tmp_path):
    path = write(tmp_path, BASE.replace('kind = "linear"', 'kind = "lienar"'))
    proc = subprocess.run([sys.executable, "-m", "hybridsim", "run", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"hybridsim run: error: {path}: modules[0].kind: unknown module kind 'lienar'")


def test_a_good_experiment_prints_its_summary_as_json(tmp_path, capsys):
    import json

    code = main(["run", str(write(tmp_path, BASE)), "--json", "--output", str(tmp_path / "out.h5")])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0
    assert summary["steps"] == 4118 and summary["integrator"] == "alpha-os"
    assert summary["peak_displacement"]["x"] > 0


@pytest.mark.parametrize("address", [None, "local"])
def test_a_plant_module_describes_itself_as_a_control_backend_and_is_refused_as_a_substructure(tmp_path, capsys,
                                                                                              address):
    import json

    plant = json.loads((EXAMPLES / "marths" / "site.json").read_text())["backend"]["daemon"]
    (tmp_path / "plant.json").write_text(json.dumps(plant))
    module = 'kind = "plant"\nconfig_file = "plant.json"' + ("" if address is None else f'\naddress = "{address}"')
    text = BASE.replace('kind = "linear"\nconfig = { dofs = ["x"], stiffness = [[39478.417604357434]] }', module)
    code = main(["run", str(write(tmp_path, text)), "--quiet", "--output", str(tmp_path / "out.h5")])
    err = capsys.readouterr().err.strip()
    where = "in process" if address is None else "local daemon at 127.0.0.1:"
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"hybridsim run: error: module 'column' ({where}")
    assert err.endswith("is a plant module, a control backend that describes no substructure: use it as an "
                        "experimental site's backend (backend = {daemon = {...}} or {address = ...}), not in [[modules]]")
    assert not (tmp_path / "out.h5").exists()


def test_an_error_found_while_building_a_module_names_its_config_file(tmp_path, capsys):
    (tmp_path / "column.toml").write_text('dofs = ["x"]\nstiffness = [[1.0, 2.0], [3.0, 4.0]]\n')
    text = BASE.replace('config = { dofs = ["x"], stiffness = [[39478.417604357434]] }', 'config_file = "column.toml"')
    code = main(["run", str(write(tmp_path, text)), "--quiet", "--output", str(tmp_path / "out.h5")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("hybridsim run: error: module 'column' (linear, config column.toml): ")
    assert "stiffness must be 1x1" in err
    assert not (tmp_path / "out.h5").exists()


@pytest.mark.parametrize("address", [None, "local"])
def test_a_site_clock_time_scale_that_makes_a_step_no_whole_number_of_samples_is_refused_at_load(tmp_path, capsys,
                                                                                                 address):
    """5 control samples of 1 ms per 5 ms step, 2.5 times slower: 12.5 samples.  Refused when the experiment is
    read (it was refused only when the site opened its session: exit 1, 'stopped at step 0'); 2.4 runs."""
    site = (EXAMPLES / "setups" / "one_actuator_site.toml").read_text().replace(
        "dt = 0.001 ", 'clock = "own"\ncommand_generation = { scheme = "predictor-corrector", order = 2 }\n'
                      "time_scale = 2.5\ndt = 0.001 ", 1)
    (tmp_path / "one_actuator_site.toml").write_text(site)
    experiment = (EXAMPLES / "setups" / "one_actuator.toml").read_text()
    if address is not None:
        experiment = experiment.replace('config_file = "one_actuator_site.toml"',
                                        f'config_file = "one_actuator_site.toml"\naddress = "{address}"')
    path = tmp_path / "one_actuator.toml"
    path.write_text(experiment)
    code = main(["run", str(path), "--quiet", "--output", str(tmp_path / "out.h5")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert err == (f"hybridsim run: error: {path}: module 'column' (config one_actuator_site.toml): time_scale 2.5 "
                   "times the 5 control samples of a step (0.005 s / dt 0.001 s) must be a whole number of samples, "
                   "not 12.5 (e.g. time_scale = 2.4 or 2.6)")
    assert not (tmp_path / "out.h5").exists()
    (tmp_path / "one_actuator_site.toml").write_text(site.replace("time_scale = 2.5", "time_scale = 2.4"))
    assert load_experiment(path).modules[0].config["time_scale"] == 2.4
