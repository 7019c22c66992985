"""What ran at each module: its description and its configuration as the module (the site) reports it.

A site reports the configuration it loaded in its Describe info (:func:`hybridsim.wire.codec.config_info`:
canonical JSON and its SHA-256).  An experiment may leave ``config`` out for a module at an address (the
site's configuration is what runs); when it gives one, it must be the site's, or the run does not start
(the site's own ``limits`` need not be repeated; given, they must be the site's too).
The results file records, per module, what the site reported (attribute ``module_descriptions``).  A site that
refuses the run's access token when asked for its description is a configuration mistake found before anything
moves: one line naming the module and the fix.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.experiment import ModuleSpec
from hybridsim.wire.codec import CONFIG_DIGEST_KEY, CONFIG_KEY, canonical_config
from hybridsim.wire.contract import AccessRefused, Description, Module, ModuleError


SITE_ONLY = ("limits",)
"""keys a site may have that the experiment need not repeat: its own safety limits (modules/limits.py)"""


def described(spec: ModuleSpec, module: Module, where: str) -> Description:
    """``module.describe()``; a site that refuses the run's token is a UsageError naming the module and the fix
    (``token_file`` in its [[modules]] table), any other failure a RunStopped."""
    try:
        return module.describe()
    except AccessRefused as exc:
        if spec.credentials is None or spec.credentials.token is None:
            fix = 'give it the site\'s access token: token_file = "FILE" in its [[modules]] table (docs/security.md)'
        else:
            fix = "its token_file holds another token: give the file of this site's own token"
        raise UsageError(f"module {spec.name!r} ({where}): the site refused the run's access; {fix} ({exc})") from None
    except ModuleError as exc:
        raise RunStopped(f"module {spec.name!r} ({where}) did not describe itself: {exc}") from None


def checked_config(spec: ModuleSpec, description: Description, where: str) -> dict[str, Any] | None:
    """The configuration that runs at ``spec``'s module: the site's as it reports it (checked against the
    experiment's ``config`` when one is given), the experiment's for a module in process; None when a
    site reports none (a site of an older hybridsim)."""
    if spec.address is None:
        return spec.config
    digest = description.info.get(CONFIG_DIGEST_KEY)
    reported = json.loads(description.info[CONFIG_KEY]) if CONFIG_KEY in description.info else None
    if digest is None or not spec.config_given:
        return reported
    ours = canonical_config(spec.config)
    if reported is None:
        differs = hashlib.sha256(ours.encode()).hexdigest() != digest
    else:
        site = {k: v for k, v in reported.items() if k not in SITE_ONLY or k in spec.config}
        differs = json.loads(ours) != site
    if differs:
        difference = "" if reported is None else f": {first_difference(json.loads(ours), site)}"
        raise UsageError(f"module {spec.name!r}: its config differs from the configuration the site ({where}) "
                         f"reports{difference}; leave config out to run the site's, or make them the same")
    return reported


def first_difference(ours: Any, theirs: Any, key: str = "config") -> str:
    """The first key at which two canonical configurations differ, with both values."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for k in sorted(set(ours) | set(theirs)):
            if k not in theirs:
                return f"{key}.{k} is given here, the site has none"
            if k not in ours:
                return f"the site has {key}.{k} = {_short(theirs[k])}, not given here"
            if ours[k] != theirs[k]:
                return first_difference(ours[k], theirs[k], f"{key}.{k}")
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        for i, (a, b) in enumerate(zip(ours, theirs)):
            if a != b:
                return first_difference(a, b, f"{key}[{i}]")
    return f"{key} is {_short(ours)} here, {_short(theirs)} at the site"


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def description_record(description: Description, where: str, config: dict[str, Any] | None) -> dict[str, Any]:
    """A module's description as the results file records it (attribute ``module_descriptions``)."""
    info = {k: v for k, v in description.info.items() if k not in (CONFIG_KEY, CONFIG_DIGEST_KEY)}
    return {"kind": description.kind, "where": where,
            "dofs": [{"name": d.name, "kind": d.kind, "unit": d.unit, "force_unit": d.force_unit}
                     for d in description.dofs],
            "control_dt": description.control_dt, "info": info, "config": config,
            "config_source": "site" if where != "in process" else "experiment"}
