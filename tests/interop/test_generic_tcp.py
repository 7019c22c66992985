"""OpenFresco's generic TCP controller protocol (ECGenericTCP): an experimental site whose control is a lab's
controller server, here `hybridsim site plant --generic-tcp`, gives the maRTHS benchmark's J of the in-process
plant."""

from __future__ import annotations

import re
import socket

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.problems.marths import loop, parts
from hybridsim.coordinator.problems.marths.evaluation import criteria
from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import Session
from tests.interop.helpers import port_of, site

pytestmark = pytest.mark.timeout(300)


def test_an_experimental_site_controlled_over_generic_tcp_gives_the_j_of_the_in_process_plant(tmp_path):
    spec = loop.RunSpec(compensator="rls", plant="nominal", duration=6.0)
    plant = parts.plant_config(spec.plant, spec.plant_seed, spec.noise, spec.noise_seed)
    with site(tmp_path, "plant", plant, "generic-tcp") as lab:
        config = parts.site_config(spec.compensator, backend={"generic_tcp": lab.addresses["generic-tcp"]}, record="site.h5")
        module = build_module("experimental", config, base_dir=tmp_path)
        module.open(Session(parts.DT, parts.SITE_DOFS))
        logs = loop.simulate(spec, loop.ModuleSide(module, parts.DT))
        module.close()
        text = lab.wait_log("closed by the generic TCP client")
    with h5py.File(tmp_path / "site.h5") as f:
        record = {name: f[name][()] for name in ("measured_strokes", "commands")}
    through_controller = loop.history(spec, logs, record)
    direct = loop.run(spec)
    np.testing.assert_array_equal(through_controller.measured_strokes, direct.measured_strokes)
    j = criteria(through_controller, 1024.0)
    assert j == criteria(direct, 1024.0)
    assert 1.0 < j["J2"][0] < 100.0  # a tracking error (%) worth comparing (6 s: the record has barely begun)
    counts = re.search(r"proposed (\d+), executed \1, committed \1", text)  # no commit on the wire: each
    assert counts and int(counts.group(1)) > 6 * 1024  # sample commits the one before, DIE the last one


def test_init_file_lines_are_logged_and_bad_input_refused(tmp_path):
    """ECGenericTCP sends its init file's lines as 16385-byte messages starting with byte 2."""
    plant = parts.plant_config("nominal", None, False, 0)
    with site(tmp_path, "plant", plant, "generic-tcp") as lab:
        sizes = np.array([2, 0, 0, 0, 1, 2, 0, 0, 2, 0, 256], dtype="=i4").tobytes()
        line = (bytes([2]) + b"kp = 1.5").ljust(16385, b"\0")
        with socket.create_connection(("127.0.0.1", port_of(lab.addresses["generic-tcp"])), timeout=10.0) as c:
            c.sendall(sizes + line + np.array([42.0] + [0.0] * 255).tobytes())
            c.settimeout(10.0)
            assert c.recv(1) == b""
        text = lab.wait_log("wrong action code 42")
        assert "init-file line 'kp = 1.5'" in text
