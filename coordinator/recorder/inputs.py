"""What a run began with, by SHA-256, and resume's comparison of it with what it would resume with.

A results file keeps (attribute ``inputs``, JSON) one digest per input of the run:

- ``experiment``: the experiment as stored in the file (canonical JSON; the modules' emulated ``network``
  tables left out: ``resume --network`` changes those deliberately);
- ``modules.NAME.config``: each module's configuration as it runs (the experiment's, read from its ``config``
  or ``config_file``; a site's as the site reports it);
- one key per file the experiment or a module's configuration names (``ground_motion.file``,
  ``structure.mass_file``, ``modules.NAME.config.stiffness_file``, ...): the SHA-256 of its bytes (a module at
  a site's address: its files are the site's, covered by the configuration it reports).

``resume`` computes the same digests from what it would run with and refuses, in one line, any that differ,
unless ``--accept-changed KEY`` names it; an accepted change is recorded in the file (attribute
``accepted_changes``: key, the digests before and after, the checkpoint step the run resumed from) and the file's
``inputs`` become the resumed run's, so a later resume compares with these.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridsim.coordinator.errors import UsageError
from hybridsim.shipped import resolve
from hybridsim.wire.codec import canonical_config

if TYPE_CHECKING:
    from hybridsim.coordinator.experiment import Experiment

INPUTS = "inputs"
"""the results file's attribute of the run's input digests"""
ACCEPTED = "accepted_changes"
"""the results file's attribute of the changes a resume was told are deliberate"""
NOT_FILES = ("token_file",)
"""file keys that are no input of the response (an access token may be renewed between a stop and a resume)"""


def digest(data: bytes) -> str:
    """The SHA-256 of ``data``, in hex."""
    return hashlib.sha256(data).hexdigest()


def fingerprint(experiment: "Experiment", reported: Mapping[str, Any]) -> dict[str, str]:
    """The input digests of a run of ``experiment``; ``reported``: each module's configuration as its site
    reports it (used for a module at a site's address)."""
    table = {k: v for k, v in experiment.table.items() if k != "modules"}
    modules = [{k: v for k, v in m.items() if k != "network"} for m in experiment.table.get("modules", [])]
    out = {"experiment": digest(canonical_config({**table, "modules": modules}).encode())}
    _files({k: v for k, v in table.items() if k != "output"}, "", experiment.base_dir, out)  # output: the results
    for spec in experiment.modules:
        at_site = spec.address not in (None, "local")
        config = reported.get(spec.name) if at_site else spec.config
        key = f"modules.{spec.name}.config"
        out[key] = digest(canonical_config(config).encode())
        if not at_site:
            _files(spec.config, key, spec.base_dir, out)
    return out


def _files(value: Any, key: str, base_dir: Path, out: dict[str, str]) -> None:
    """The digests of the files named under ``value`` (keys ``file`` or ``*_file``, relative to ``base_dir``)."""
    items = (value.items() if isinstance(value, dict) else
             ((f"[{i}]", v) for i, v in enumerate(value)) if isinstance(value, list) else ())
    for name, item in items:
        where = f"{key}{name}" if name.startswith("[") else f"{key}.{name}".lstrip(".")
        if isinstance(item, str) and (name == "file" or name.endswith("_file")) and name not in NOT_FILES:
            try:
                out[where] = digest(resolve(item, base_dir).read_bytes())
            except OSError:  # gone (FileNotFoundError) or unreadable: a change like any other
                out[where] = "missing"
        else:
            _files(item, where, base_dir, out)


def compared(path: Path, attrs: Mapping[str, Any], now: Mapping[str, str], accept: Sequence[str],
             step: int) -> dict[str, str]:
    """The attributes a resume of ``path`` (its ``attrs``) from ``step`` writes: the inputs ``now`` and the
    changes accepted; a changed input that ``accept`` does not name is refused in one line."""
    stored = json.loads(attrs[INPUTS]) if INPUTS in attrs else dict(now)  # a file of an older hybridsim: none kept
    changed = sorted(k for k in stored.keys() | now.keys() if stored.get(k) != now.get(k))
    refused = [k for k in changed if k not in accept]
    if refused:
        more = f" (and {', '.join(refused[1:])})" if refused[1:] else ""
        raise UsageError(f"{path}: {refused[0]} changed since the run began (SHA-256 {_short(stored.get(refused[0]))} "
                         f"then, {_short(now.get(refused[0]))} now){more}; restore it, or resume with --accept-changed "
                         f"{refused[0]} if the change is deliberate (it is recorded in the results file)")
    unknown = [k for k in accept if k not in changed]
    if unknown:
        raise UsageError(f"--accept-changed {unknown[0]}: that input has not changed "
                         f"({'the changed ones: ' + ', '.join(changed) if changed else 'none has'}); drop the option")
    accepted = json.loads(attrs.get(ACCEPTED, "[]")) + [
        {"key": k, "before": stored.get(k), "after": now.get(k), "resumed_from_step": step} for k in changed]
    return {INPUTS: json.dumps(dict(now)), ACCEPTED: json.dumps(accepted)}


def _short(value: str | None) -> str:
    """A digest's first 12 hex digits ("none": the input was not there)."""
    return "none" if value is None else value[:12]
