"""openseespy is imported only by what drives a model: importing it makes the process print "Process 0
Terminating" at exit, which followed every one-line refusal of an experiment with an OpenSees module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import EXAMPLES


def hybridsim(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hybridsim", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_a_refused_experiment_with_opensees_modules_prints_its_one_line_and_nothing_else(tmp_path):
    for name in ("opensees_frame_hybrid.toml", "opensees_site_upper.toml", "opensees_site_lower.toml",
                 "opensees_site_bay_linear.toml"):
        (tmp_path / name).write_text((EXAMPLES / name).read_text())
    upper = tmp_path / "opensees_site_upper.toml"
    upper.write_text(upper.read_text().replace("\nmodel = ", "\nmodell = ", 1))
    done = hybridsim("run", "opensees_frame_hybrid.toml", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "hybridsim run: error: opensees_frame_hybrid.toml: unknown key modell in module 'upper' (config "
        "opensees_site_upper.toml); allowed: analysis, control, dynamic, force_control, kind, limits, mass_from_model, model, "
        "parameters, path_independent, resume; did you mean model?"]


def test_describing_the_kinds_that_can_hold_an_opensees_model_imports_no_openseespy(tmp_path):
    for kind in ("opensees", "plant", "experimental"):
        done = hybridsim("site", kind, "--describe-config", cwd=tmp_path)
        assert done.returncode == 0 and "| `" in done.stdout
        assert done.stderr == "", (kind, done.stderr)
    probe = ("import sys; from hybridsim.modules.registry import module_schema; "
             "[module_schema(k) for k in ('opensees', 'plant', 'experimental')]; print('openseespy' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


def test_a_model_file_gets_the_real_openseespy_module(tmp_path):
    """The user's build(ops, ...) receives openseespy.opensees itself (any of its commands, as before)."""
    model = tmp_path / "model.py"
    model.write_text("def build(ops):\n    import openseespy.opensees as real\n    assert ops is real\n"
                     "    ops.model('basic', '-ndm', 1, '-ndf', 1)\n    ops.node(1, 0.0)\n")
    probe = (f"from pathlib import Path; from hybridsim.modules.opensees import domain; "
             f"domain.build_model(domain.load_builder(Path({str(model)!r})), {{}}, Path('model.py')); print('built')")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "built", done.stderr
