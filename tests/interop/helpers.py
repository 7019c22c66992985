"""Helpers of the interop tests: real site processes serving the labs' protocols, openseespy peers (one model
per process), and the two-storey building of tests/interop/opensees_peer.py as a hybridsim experiment."""

from __future__ import annotations

import json
import math
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

PEER = Path(__file__).with_name("opensees_peer.py")
K = [[7.0e5, -3.0e5], [-3.0e5, 3.0e5]]
"""the building's storey springs (k1 = 4e5, k2 = 3e5 N/m) over the floors u2, u3"""
LINEAR = {"dofs": ["u2", "u3"], "stiffness": K}
CONTROL_POINTS = {"MDL-00-01": {"x": "u2"}, "MDL-00-02": {"x": "u3"}}
STEPS = 300


@dataclass
class Site:
    """A running `hybridsim site` process and the addresses its protocols serve on."""

    process: subprocess.Popen
    addresses: dict[str, str]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text()

    def wait_log(self, pattern: str, timeout_s: float = 20.0) -> str:
        """The site's log once ``pattern`` (a regex) appears in it."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            text = self.log_text()
            if re.search(pattern, text):
                return text
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} not in the site's log within {timeout_s} s:\n{self.log_text()}")


@contextmanager
def site(tmp_path: Path, kind: str, config: dict[str, Any], *protocols: str, extra: tuple[str, ...] = ()
         ) -> Iterator[Site]:
    """`hybridsim site KIND` with ``config`` and each of ``protocols`` (openfresco, simcor) on a free loopback port."""
    path = tmp_path / f"{kind}-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(config))
    log = path.with_suffix(".log")
    command = [sys.executable, "-m", "hybridsim", "site", kind, "--config", str(path), "--listen", "127.0.0.1:0",
               "--link-listen", "none", *extra]
    for protocol in protocols:
        command += [f"--{protocol}", "127.0.0.1:0"]
    with open(log, "w") as err:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        ready, _, _ = select.select([process.stdout], [], [], 60.0)
        line = process.stdout.readline() if ready else ""
        assert "serving" in line, f"the site did not start:\n{log.read_text()}"
        addresses = dict(re.findall(r"([\w-]+) on (127\.0\.0\.1:\d+)", line))
        yield Site(process, addresses, log)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def opensees(args: dict[str, Any], timeout_s: float = 120.0) -> np.ndarray:
    """Run the openseespy peer to the end; the floor displacements it printed (steps x 2)."""
    done = subprocess.run([sys.executable, str(PEER), json.dumps({"steps": STEPS, **args})], capture_output=True,
                          text=True, timeout=timeout_s)
    assert done.returncode == 0, done.stderr
    return np.array(json.loads(done.stdout.strip().splitlines()[-1]))


def port_of(address: str) -> int:
    return int(address.rpartition(":")[2])


def ground_motion(path: Path) -> Path:
    """The peer's ground motion (2 m/s^2 at 2 Hz for 1 s, then nothing) as a CSV record."""
    with open(path, "w") as file:
        for k in range(STEPS + 1):
            t = 0.01 * k
            file.write(f"{t},{2.0 * math.sin(2 * math.pi * 2.0 * t) if t <= 1.0 else 0.0}\n")
    return path


def building(tmp_path: Path, module: dict[str, Any], name: str) -> dict[str, Any]:
    """The peer's building (masses, mass-proportional damping, ground motion) as an experiment table."""
    return {
        "experiment": {"name": name, "dt": 0.01},
        "structure": {"dofs": ["u2", "u3"], "mass_diagonal": [100.0, 80.0], "damping": {"rayleigh": [0.5, 0.0]},
                      "influence": [1.0, 1.0]},
        "ground_motion": {"file": str(ground_motion(tmp_path / "ground.csv"))},
        "integrator": {"kind": "alpha-os"},
        "modules": [{"name": "building", **module}],
        "output": {"file": str(tmp_path / f"{name}.h5")},
    }


def relative(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max |b|"""
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max())
