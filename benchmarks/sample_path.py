"""The files one control sample of an experimental site passes through, in the order it enters them.

A coordinator's step at an experimental site (the shipped one-actuator site: a virtual lab with a first-order
actuator, a polynomial compensator, noisy sensors) is traced with :func:`sys.setprofile`: every call from
one source file into another is an entry.  The script prints, for one step and for one of its control
samples, the files entered, the count of changes between files (entries and the returns from them), and each
file entered more than once from the same caller (a path that goes back and forth between two files).

    .venv/bin/python benchmarks/sample_path.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import Command, Session

ROOT = Path(__file__).resolve().parents[1]
"""the repository: its source files are the package's (an editable install)"""
SITE = ROOT / "examples" / "setups" / "one_actuator_site.toml"
STEP_DT = 0.01
"""s: the coordinator's step, ten control samples of the site's 1 ms"""


def _relative(filename: str) -> str | None:
    path = Path(filename)
    inside = path.is_relative_to(ROOT) and ".venv" not in path.parts and "site-packages" not in path.parts
    return str(path.relative_to(ROOT)) if inside else None


def trace(action: Callable[[], Any]) -> list[tuple[str, str]]:
    """The (caller's file, callee's file) of every call between two of the package's files during ``action``."""
    entries: list[tuple[str, str]] = []

    def profile(frame, event, _arg):  # noqa: ANN001 (sys.setprofile's signature)
        if event != "call" or frame.f_back is None:
            return
        callee, caller = _relative(frame.f_code.co_filename), _relative(frame.f_back.f_code.co_filename)
        if callee and caller and callee != caller:
            entries.append((caller, callee))

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return entries


def summary(entries: list[tuple[str, str]]) -> dict[str, Any]:
    """Files entered, changes between files (each entry and its return), the entries repeated (a loop over
    parts of one kind), and the call-backs: a file called by a file it calls (the path goes back and forth)."""
    files = list(dict.fromkeys(callee for _, callee in entries))
    pairs = Counter(entries)
    repeated = {f"{a} -> {b}": n for (a, b), n in pairs.items() if n > 1}
    callbacks = sorted({" <-> ".join(sorted((a, b))) for a, b in pairs if (b, a) in pairs})
    return {"files": len(files), "changes": 2 * len(entries), "entries": len(entries),
            "repeated": repeated, "callbacks": callbacks, "order": files}


def measure() -> dict[str, Any]:
    config = tomllib.loads(SITE.read_text())
    module = build_module("experimental", config, base_dir=SITE.parent)
    module.open(Session(STEP_DT, ("x",)))
    target = 0.0
    for step in range(20):  # past the compensator's start and the session's rest
        module.propose(step, Command(step * STEP_DT, np.array([target])))
        module.execute(step)
        module.commit(step)
        target = 1e-3 * np.sin(0.3 * step)
    step = 20
    module.propose(step, Command(step * STEP_DT, np.array([target])))
    whole = trace(lambda: module.execute(step))
    module.commit(step)
    site = module.site  # the composed site: one sample is one call of advance
    one = trace(lambda: site.advance(np.array([target])))
    module.close()
    return {"step": summary(whole), "sample": summary(one)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the measurement as JSON")
    result = measure()
    if parser.parse_args().json:
        print(json.dumps(result, indent=2))
        return
    for name, part in result.items():
        print(f"one {name}: {part['files']} files, {part['entries']} entries ({part['changes']} changes "
              f"between files), {len(part['callbacks'])} call-backs, {len(part['repeated'])} caller->callee pairs "
              "entered more than once")
        for pair in part["callbacks"]:
            print(f"    call-back {pair}")
        for pair, n in part["repeated"].items():
            print(f"    {n} x {pair}")
        print("    " + " -> ".join(part["order"]))


if __name__ == "__main__":
    main()
