"""The runs of a campaign: the full factorial of ``[campaign.grid]`` times ``trials`` seeds.

A grid maps dotted experiment keys (``"excitation.scale"``, ``"modules.0.config.yield_force"``: a
number indexes a list of tables) to lists of values; every combination is run ``trials`` times with
seeds 0..trials-1.  Each run has a stable id made of its values, so a resumed campaign finds the runs
it already made.  :func:`apply` writes a run's values (and its seeded draws, :mod:`.draws`) into a
copy of the experiment's configuration (a nested dict).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hybridsim.coordinator.errors import UsageError


@dataclass(frozen=True)
class Run:
    """One run of a campaign: its dotted-key values, its seed and the values drawn from that seed."""

    values: tuple[tuple[str, Any], ...]
    seed: int
    drawn: tuple[tuple[str, float], ...] = ()

    @property
    def run_id(self) -> str:
        """A file-name-safe id, the same in every session for the same values, seed and draws: a digest of the
        draws ends it, so a campaign whose ``[campaign.random]`` changed makes its runs again instead of taking
        the old files for them."""
        parts = [f"{key}={value}" for key, value in self.values] + [f"seed={self.seed}"]
        if self.drawn:
            parts.append(f"draws={hashlib.sha256(repr(self.drawn).encode()).hexdigest()[:12]}")
        return "_".join(parts).replace("/", "-").replace(" ", "")


def expand(grid: Mapping[str, Sequence[Any]], trials: int = 1) -> list[Run]:
    """Every combination of the grid's values (keys in the file's order), each with seeds 0..trials-1."""
    if trials < 1:
        raise UsageError(f"campaign.trials = {trials}: give a whole number of 1 or more")
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
            raise UsageError(f"campaign.grid.{key}: give a non-empty list of values, e.g. [0.5, 1.0]")
    keys = list(grid)
    return [Run(tuple(zip(keys, combo)), seed)
            for combo in itertools.product(*(grid[k] for k in keys)) for seed in range(trials)]


def _child(node: Any, name: str, key: str, where: str) -> Any:
    """``node[name]`` of a table, or ``node[int(name)]`` of a list of tables; one line if there is none."""
    if isinstance(node, list) and name.isdigit() and int(name) < len(node):
        return node[int(name)]
    if isinstance(node, dict) and isinstance(node.get(name), (dict, list)):
        return node[name]
    raise UsageError(f"campaign: {key}: the experiment has no table [{where}]; name a key of the experiment "
                     f"file (a number indexes a list of tables: modules.0.config.KEY)")


def apply(config: Mapping[str, Any], run: Run) -> dict[str, Any]:
    """A copy of ``config`` with the run's values and draws set at their dotted keys; the key's table must exist."""
    out = copy.deepcopy(dict(config))
    for key, value in run.values + run.drawn:
        *tables, leaf = key.split(".")
        node: Any = out
        for depth, name in enumerate(tables):
            node = _child(node, name, key, ".".join(tables[:depth + 1]))
        if not isinstance(node, dict):
            raise UsageError(f"campaign: {key}: [{'.'.join(tables)}] is a list; name one of its tables by number")
        node[leaf] = value
    return out
