"""An experimental site whose plant is a `hybridsim site plant` daemon, across an emulated network path
(``backend.network``, hybridsim.wire.network): the site waits for every sample's round trip and never changes what
it commands; the path's counters reach the site's close stats.

Oracle: the same site with its lab in its own process (no wire at all), and the closed form of the path: a
lockstep sample is one exchange with the plant (its commit rides with the next sample's step), so S samples take
at least S (round_trip_s - 2 jitter_s)."""

from __future__ import annotations

import time
import tomllib
from pathlib import Path

import numpy as np
import pytest

from hybridsim.modules.experimental.module import ExperimentalModule
from hybridsim.wire.contract import Command, ModuleError, Session

SETUPS = Path(__file__).resolve().parents[3] / "examples" / "setups"
STEP_DT, SAMPLES, STEPS = 0.005, 5, 30
ROUND_TRIP_S, JITTER_S = 0.004, 0.0005


def site(backend: dict) -> ExperimentalModule:
    config = tomllib.loads((SETUPS / "one_actuator_site.toml").read_text())
    plant = config.pop("backend")["plant"]
    return ExperimentalModule({**config, "backend": {**backend, **({"plant": plant} if not backend else
                                                                   {"daemon": plant})}}, SETUPS)


def run(module: ExperimentalModule) -> tuple[np.ndarray, float, dict[str, float]]:
    """Steps of a 1 Hz sine of 5 mm: the measured displacement and force of each, the steps' wall time (s), the
    close stats."""
    module.open(Session(STEP_DT, ("x",)))
    rows = []
    began = time.perf_counter()
    for n in range(STEPS + 1):
        module.propose(n, Command(n * STEP_DT, np.array([0.005 * np.sin(2 * np.pi * n * STEP_DT)])))
        result = module.execute(n)
        module.commit(n)
        rows.append(np.concatenate((result.displacement, result.force)))
    wall = time.perf_counter() - began
    return np.array(rows), wall, module.close()


def test_the_site_to_plant_link_across_a_lossy_path_waits_and_commands_the_same(tmp_path: Path) -> None:
    reference, _, _ = run(site({}))
    network = {"round_trip_s": ROUND_TRIP_S, "jitter_s": JITTER_S, "loss": 0.05, "retransmit_s": 0.02, "seed": 4}
    across, wall, stats = run(site({"network": network, "transport": "link"}))
    np.testing.assert_array_equal(across, reference)  # bit for bit: the path delays, it never changes a sample
    assert wall >= STEPS * SAMPLES * (ROUND_TRIP_S - 2 * JITTER_S)
    assert stats["plant_network_segments"] >= 2 * STEPS * SAMPLES  # each sample's step out and its result back
    assert stats["plant_network_lost_segments"] >= 1 and stats["plant_network_max_resend_wait_s"] >= 0.02


@pytest.mark.parametrize("backend, message", [
    ({"network": {"round_trip_s": 0.01}}, "backend.network: a plant in this process"),
    ({"address": "127.0.0.1:1", "network": {"round_trip_s": 0.01, "lag": 1}}, "backend.network.lag"),
    ({"address": "127.0.0.1:1", "network": {"round_trip_s": 0.01, "jitter_s": 0.02}}, "backend.network"),
])
def test_a_wrong_backend_network_is_one_line_naming_the_key(backend: dict, message: str) -> None:
    config = tomllib.loads((SETUPS / "one_actuator_site.toml").read_text())
    with pytest.raises(ModuleError, match=message.replace(".", r"\.")) as refused:
        ExperimentalModule({**config, "backend": {**config["backend"], **backend} if "address" not in backend
                            else backend}, SETUPS)
    assert "\n" not in str(refused.value)
