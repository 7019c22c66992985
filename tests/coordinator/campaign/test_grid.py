"""A campaign's runs: full factorial of the grid times the trials' seeds, written into a shipped experiment."""

import tomllib
from pathlib import Path

import pytest

from hybridsim.coordinator.campaign.draws import with_draws
from hybridsim.coordinator.campaign.grid import apply, expand
from hybridsim.coordinator.errors import UsageError

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "frame_monolithic.toml"


def test_three_scales_two_seeds_are_six_distinct_runs():
    runs = expand({"ground_motion.scale": [0.2, 0.4, 0.8]}, trials=2)
    assert len(runs) == 3 * 2
    assert len({r.run_id for r in runs}) == 6
    assert runs[1].run_id == "ground_motion.scale=0.2_seed=1"


def test_full_factorial_of_two_keys():
    runs = expand({"a.x": [1, 2], "b.y": ["p", "q", "r"]}, trials=1)
    assert [dict(r.values) for r in runs][:2] == [{"a.x": 1, "b.y": "p"}, {"a.x": 1, "b.y": "q"}]
    assert len(runs) == 6


def test_a_run_sets_its_key_in_the_shipped_experiment():
    config = tomllib.loads(EXAMPLE.read_text())
    run = expand({"ground_motion.scale": [0.8]})[0]
    varied = apply(config, run)
    assert varied["ground_motion"]["scale"] == 0.8
    assert config["ground_motion"]["scale"] == 0.4  # the experiment itself is unchanged


@pytest.mark.parametrize("grid, trials, words", [
    ({"ground_motion.scale": 0.4}, 1, "non-empty list"),
    ({"ground_motion.scale": []}, 1, "non-empty list"),
    ({"ground_motion.scale": [1.0]}, 0, "campaign.trials"),
])
def test_bad_grid_is_one_line(grid, trials, words):
    with pytest.raises(UsageError, match=words) as err:
        expand(grid, trials)
    assert "\n" not in str(err.value)


def test_unknown_table_is_one_line():
    config = tomllib.loads(EXAMPLE.read_text())
    with pytest.raises(UsageError, match=r"no table \[nowhere\]"):
        apply(config, expand({"nowhere.scale": [1.0]})[0])


def test_a_changed_random_table_changes_the_run_ids_and_the_same_one_keeps_them():
    """A campaign started again with other distributions must not take the old runs' files for its own."""
    runs = expand({"ground_motion.scale": [0.2]}, trials=2)
    law = {"modules.0.config.stiffness": {"distribution": "normal", "mean": 100.0, "std": 10.0}}
    wider = {"modules.0.config.stiffness": {"distribution": "normal", "mean": 100.0, "std": 20.0}}
    ids = [r.run_id for r in with_draws(runs, law)]
    assert ids == [r.run_id for r in with_draws(runs, law)]
    assert not set(ids) & {r.run_id for r in with_draws(runs, wider)}
    assert ids[1].startswith("ground_motion.scale=0.2_seed=1_draws=")
