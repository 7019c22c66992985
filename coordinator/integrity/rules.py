"""The experiment's ``[integrity]`` table: a threshold per indicator and the action when one is crossed, for every
experimental site (the table's own keys) and per site (``[[integrity.site]]``, overriding them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hybridsim.coordinator.errors import UsageError
from hybridsim.modules.config_schema import Key, Number, Schema, Tables, Text

ACTIONS = ("warn", "hold", "stop")
"""warn: log it and go on; hold: the site's gate refuses every command until an operator clears it
(``hybridsim site-control --clear``); stop: the run ends, the reason in its status"""

THRESHOLDS = {
    "energy_error": Key(Number("1", minimum=0, open_minimum=True), "E_err / E_in: the energy the site's transfer "
                        "system added over the energy the ground motion put in (Mosqueda et al. 2007)"),
    "tracking": Key(Number("m^2", minimum=0, open_minimum=True), "|TI| of any of the site's DOFs: the area of "
                    "its synchronization subspace plot (Mercan & Ricles 2007)"),
    "delay": Key(Number("s", minimum=0, open_minimum=True), "|tau| of any of the site's DOFs, the online delay "
                 "estimate (compared once its memory of 1000 steps has passed)"),
}
ACTION = Key(Text(ACTIONS), "what a crossing does: warn, hold (the site's gate) or stop (the run)")

SITE = Schema("integrity.site", "One module's thresholds and action, overriding [integrity]'s.", {
    "name": Key(Text(), "the module's name (any kind: a site, a virtual lab)", required=True),
    **THRESHOLDS, "action": ACTION,
})

INTEGRITY = Schema("[integrity]", "The indicators watched while the run goes (docs/integrity.md): a threshold per "
                   "indicator for every experimental site, and the action when one is crossed.", {
                       **THRESHOLDS,
                       "action": Key(ACTION.type, ACTION.doc, default="warn"),
                       "site": Key(Tables(SITE), "one module's own thresholds and action"),
                   })


@dataclass(frozen=True)
class Rule:
    """One module's thresholds (indicator -> value, in the indicator's unit) and action."""

    thresholds: Mapping[str, float]
    action: str


def site_rules(spec: Mapping[str, Any], modules: Sequence[tuple[str, str]]) -> dict[str, Rule]:
    """The rule of each watched module, from ``[integrity]`` and the ``(name, kind)`` of every module: each
    experimental one gets the table's thresholds, a ``[[integrity.site]]`` overrides them for its module."""
    names = {name for name, _ in modules}
    common = {k: float(spec[k]) for k in THRESHOLDS if k in spec}
    action = spec.get("action", "warn")
    rules = {name: Rule(common, action) for name, kind in modules if kind == "experimental"}
    for i, site in enumerate(spec.get("site", ())):
        if site["name"] not in names:
            raise UsageError(f"integrity.site[{i}].name: no module is named {site['name']!r}; name one of "
                             f"{', '.join(sorted(names))}")
        own = {k: float(site[k]) for k in THRESHOLDS if k in site}
        rules[site["name"]] = Rule({**common, **own}, site.get("action", action))
    return {name: rule for name, rule in rules.items() if rule.thresholds}
