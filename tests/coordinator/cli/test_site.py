"""`hybridsim site`: bad input gives exit code 2 and one line naming the option and the fix."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from coordinator.cli import main


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "left.toml"
    path.write_text('dofs = ["x"]\nstiffness = [[1.0]]\n')
    return path


def error_of(capsys, *argv: str) -> str:
    assert main(["site", *argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    return lines[0]


def test_an_unknown_kind_names_the_known_ones(capsys, config):
    line = error_of(capsys, "nosuch", "--config", str(config), "--listen", "127.0.0.1:0")
    assert line.startswith(f"hybridsim site: error: site left (nosuch, {config}): unknown module kind 'nosuch'; known kinds: ")
    assert "linear" in line


def test_a_missing_or_unreadable_config(capsys, tmp_path):
    line = error_of(capsys, "linear", "--config", str(tmp_path / "none.toml"))
    assert line == f"hybridsim site: error: --config: cannot read {tmp_path / 'none.toml'}: No such file or directory"
    bad = tmp_path / "bad.toml"
    bad.write_text("dofs = [")
    assert error_of(capsys, "linear", "--config", str(bad)).startswith(f"hybridsim site: error: --config: {bad} is not valid TOML")
    other = tmp_path / "site.yaml"
    other.write_text("dofs: [x]")
    assert error_of(capsys, "linear", "--config", str(other)) == \
        f"hybridsim site: error: --config: {other} must be a .toml or .json file"


def test_a_bad_config_table_is_the_module_s_own_message(capsys, tmp_path):
    path = tmp_path / "left.json"
    path.write_text('{"dofs": ["x", "y"], "stiffness": [[1.0]]}')
    assert error_of(capsys, "linear", "--config", str(path)) == (
        f"hybridsim site: error: site left (linear, {path}): linear module: stiffness must be 2x2 (one row per DOF), "
        "got shape (1, 1)")


def test_a_bad_listen_address_or_a_port_in_use(capsys, config):
    assert error_of(capsys, "linear", "--config", str(config), "--listen", "50051") == \
        "hybridsim site: error: --listen: give HOST:PORT (e.g. 127.0.0.1:50051 or 0.0.0.0:0), not '50051'"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = error_of(capsys, "linear", "--config", str(config), "--listen", f"127.0.0.1:{port}")
    assert line.startswith(f"hybridsim site: error: site left (linear, {config}): cannot listen on 127.0.0.1:{port}")
