"""Seeded draws of ``[campaign.random]``: each run's uncertain values, from its seed alone.

``[campaign.random]`` maps dotted experiment keys to a distribution (``normal``: mean, std;
``lognormal``: median and beta, the standard deviation of ln X, as fragility studies state it;
``uniform``: low, high).  A run of seed s draws every key, in the file's order, from
``numpy.random.default_rng((campaign.seed, s))`` with :mod:`scipy.stats`: the same seed gives the
same draws whatever the grid values (common random numbers across the grid, so a sensitivity is
not hidden by sampling noise), a different seed different ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from scipy import stats

from hybridsim.coordinator.campaign.grid import Run
from hybridsim.coordinator.errors import UsageError
from hybridsim.modules.config_schema import ConfigError, Key, Number, Schema, Text

POSITIVE = Number(minimum=0, open_minimum=True)

LAWS: dict[str, tuple[tuple[str, ...], Callable[..., Any]]] = {
    "normal": (("mean", "std"), lambda mean, std: stats.norm(mean, std)),
    "lognormal": (("median", "beta"), lambda median, beta: stats.lognorm(s=beta, scale=median)),
    "uniform": (("low", "high"), lambda low, high: stats.uniform(low, high - low)),
}
"""distribution -> (its parameters, the frozen scipy.stats law made of them)"""

DISTRIBUTION = Schema("campaign.random.KEY", "One uncertain value of the experiment (KEY: its dotted key, quoted: "
                      '`[campaign.random."modules.0.config.stiffness"]`), drawn anew for every seed.', {
                          "distribution": Key(Text(tuple(LAWS)), "the law: normal (mean, std), lognormal (median, "
                                              "beta = std of ln X) or uniform (low, high)", required=True),
                          "mean": Key(Number(), "normal: the mean (the key's unit)"),
                          "std": Key(POSITIVE, "normal: the standard deviation (the key's unit)"),
                          "median": Key(POSITIVE, "lognormal: the median (the key's unit)"),
                          "beta": Key(POSITIVE, "lognormal: the standard deviation of ln X"),
                          "low": Key(Number(), "uniform: the lower bound (the key's unit)"),
                          "high": Key(Number(), "uniform: the upper bound (the key's unit)"),
                      })


def laws(random: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The frozen law of every key; one line naming the key and what to give when a table is wrong."""
    out = {}
    for key, table in random.items():
        try:
            DISTRIBUTION.check(table, f"campaign.random.{key}")
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        names, law = LAWS[table["distribution"]]
        given = set(table) - {"distribution"}
        if given != set(names):
            raise UsageError(f"campaign.random.{key}: a {table['distribution']} law takes {' and '.join(names)}, "
                             f"not {', '.join(sorted(given)) or 'nothing'}")
        if table["distribution"] == "uniform" and not table["low"] < table["high"]:
            raise UsageError(f"campaign.random.{key}: low = {table['low']} is not below high = {table['high']}")
        out[key] = law(*(table[n] for n in names))
    return out


def with_draws(runs: Sequence[Run], random: Mapping[str, Mapping[str, Any]], seed: int = 0) -> list[Run]:
    """The runs, each with its draws (``Run.drawn``) from ``(seed, run.seed)``."""
    frozen = laws(random)
    if not frozen:
        return list(runs)
    return [replace(run, drawn=draw(frozen, seed, run.seed)) for run in runs]


def draw(frozen: Mapping[str, Any], seed: int, trial: int) -> tuple[tuple[str, float], ...]:
    """One value of every law, in order, from the generator of ``(seed, trial)``."""
    rng = np.random.default_rng((seed, trial))
    return tuple((key, float(law.rvs(random_state=rng))) for key, law in frozen.items())
