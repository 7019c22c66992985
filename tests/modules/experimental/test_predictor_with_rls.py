"""The second- and third-order predictor-corrector with an RLS adaptive compensator is refused when samples are
predicted: on the maRTHS design card it saturates the servo (docs/realtime.md, Limits: the predictor's error
bends the command once per step and the compensator's adapted inverse amplifies those bends)."""

from __future__ import annotations

import pytest

from hybridsim.coordinator.problems.marths import parts
from hybridsim.modules.experimental.module import ExperimentalModule
from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import ModuleError, Session


def site(compensator: str, generation: dict, **more) -> object:
    plant = parts.plant_config("nominal", None, False, 1)
    config = {**parts.site_config(compensator, backend={"plant": plant}), "command_generation": generation, **more}
    return build_module("experimental", config)


@pytest.mark.parametrize("generation, more, samples", [
    ({"scheme": "predictor-corrector", "order": 2, "arrival": 0.5}, {}, 10),
    ({"scheme": "predictor-corrector", "order": 3, "arrival": 0.2}, {}, 10),
    ({"scheme": "predictor-corrector", "order": 2}, {"clock": "own"}, 10),
])
def test_order_2_or_3_predicting_with_rls_is_refused_when_read_and_at_open_in_one_line(generation, more, samples) -> None:
    module = site("rls", generation, **more)
    refusal = ExperimentalModule.session_refusal(module.config, samples * parts.DT)  # when the experiment is read
    assert refusal is not None and refusal.startswith(f"command_generation order {generation['order']} with an RLS")
    with pytest.raises(ModuleError, match=r"order \d with an RLS adaptive compensator \(actuator 1\) saturates the "
                                          r"servo.*use command_generation order = 1") as refused:
        module.open(Session(samples * parts.DT, parts.SITE_DOFS))
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("compensator, generation, samples", [
    ("rls", {"scheme": "predictor-corrector", "order": 1, "arrival": 0.5}, 10),  # first order: the wan bench's
    ("rls", {"scheme": "predictor-corrector", "order": 2, "arrival": 0.0}, 10),  # nothing predicted: interpolation
    ("rls", {"scheme": "predictor-corrector", "order": 3, "arrival": 0.6}, 1),  # one sample per step: lockstep
    ("none", {"scheme": "predictor-corrector", "order": 2, "arrival": 0.5}, 10),
])
def test_what_runs_is_not_refused(compensator, generation, samples) -> None:
    module = site(compensator, generation)
    assert ExperimentalModule.session_refusal(module.config, samples * parts.DT) is None
    module.open(Session(samples * parts.DT, parts.SITE_DOFS))
    module.close()
