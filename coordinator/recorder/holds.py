"""Resume of a run that ended held: a hold that ended with the run is cleared by the operator on the command line.

A site's hold (its interlock, set by an integrity indicator's ``hold``, a measured overload or the operator's
``Hold``) lives in the site's process. A site daemon the lab runs (``address = "HOST:PORT"``) keeps it: it refuses
every run and resume until ``hybridsim site-control HOST:PORT --clear``. A site in the coordinator's process or
at an ``address = "local"`` daemon ends with the run, and its hold with it; the results file's ``stop`` (module,
cause, step) is all that is left. ``resume`` refuses such a run in one line unless ``--clear-hold SITE`` names
the site; the clear is logged and recorded in the file (attribute ``cleared_holds``: site, reason, the step the
gate refused, operator, time UTC, the checkpoint step resumed from).
"""

from __future__ import annotations

import datetime
import getpass
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridsim.coordinator.errors import UsageError

if TYPE_CHECKING:
    from hybridsim.coordinator.experiment import ModuleSpec

log = logging.getLogger(__name__)

CLEARED = "cleared_holds"
"""the results file's attribute of the holds an operator cleared on resume"""
HELD = ("the site is held since ", "site on hold: ")
"""how a held gate refuses a command (an experimental site, a site with [limits]); the stop's ``cause`` keeps it"""
UNTIL = "; an operator clears"
"""where the gate's refusal goes on from the reason to how it is cleared"""
GONE = (None, "local")
"""the module addresses whose site ends with the run: the coordinator's process, a daemon it starts"""


def held(attrs: Mapping[str, Any]) -> tuple[str, str, int] | None:
    """(site, reason, the step its gate refused) of a run whose results file says it ended held; else None."""
    stop = json.loads(attrs.get("stop") or "null") or {}
    cause = str(stop.get("cause", ""))
    for marker in HELD:
        if marker in cause and "module" in stop:
            return stop["module"], cause.split(marker, 1)[1].split(UNTIL, 1)[0], int(stop["step"])
    return None


def resume_command(results: Path, attrs: Mapping[str, Any]) -> str:
    """What continues the stopped run of ``results`` (its ``attrs``): ``hybridsim resume``, with ``--clear-hold
    SITE`` if a site's hold that ended with the run stopped it, after ``hybridsim site-control HOST:PORT --clear``
    if a site daemon at HOST:PORT keeps it."""
    found = held(attrs)
    addresses = {m.get("name"): m.get("address")
                 for m in json.loads(attrs.get("experiment_table", "{}")).get("modules", [])}
    if found is None or found[0] not in addresses:
        return f"`hybridsim resume {results}`"
    if addresses[found[0]] in GONE:
        return f"`hybridsim resume {results} --clear-hold {found[0]}`"
    return f"`hybridsim site-control {addresses[found[0]]} --clear` at the site, then `hybridsim resume {results}`"


def cleared(path: Path, attrs: Mapping[str, Any], modules: Sequence["ModuleSpec"], clear: Sequence[str],
            step: int) -> dict[str, str]:
    """The attributes a resume of ``path`` (its ``attrs``) from checkpoint ``step`` writes for ``clear`` (the sites
    ``--clear-hold`` names); a hold that ended with the run and is not named, or a name that clears nothing, is
    refused in one line."""
    found = held(attrs)
    addresses = {m.name: m.address for m in modules}
    for site in clear:
        address = addresses.get(site)
        if found is None or found[0] != site:
            raise UsageError(f"--clear-hold {site}: {path}'s run did not end held at site {site} "
                             f"({'it ended held at ' + found[0] if found else 'no site held it'}); drop the option")
        if address not in GONE:
            raise UsageError(f"--clear-hold {site}: the site daemon at {address} keeps its own hold; an operator "
                             f"clears it there (hybridsim site-control {address} --clear), then resume without the "
                             "option")
    if found is None or addresses.get(found[0], "gone") not in GONE:
        return {}
    site, reason, refused = found
    if site not in clear:
        raise UsageError(f"{path}: site {site} held the run (step {refused} refused) since {reason}; its hold ended "
                         f"with the run, so the operator clears it on the command line once the cause is dealt "
                         f"with: hybridsim resume {path} --clear-hold {site}")
    record = {"site": site, "reason": reason, "step": refused, "operator": getpass.getuser(),
              "time_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "resumed_from_step": step}
    log.warning("site %s: hold cleared by %s on resume (%s): %s", site, record["operator"], record["time_utc"],
                reason)
    return {CLEARED: json.dumps(json.loads(attrs.get(CLEARED, "[]")) + [record])}
