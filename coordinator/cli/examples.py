"""`hybridsim examples [--copy DIR]`: list the shipped example experiments, or copy them into DIR.

A copy runs from any folder (`hybridsim run DIR/sdof.toml`): the examples name the shipped data as
``hybridsim:NAME`` (e.g. ``file = "hybridsim:marths/ground_motion_elcentro.csv"``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

from hybridsim.coordinator.errors import UsageError
from hybridsim.shipped import listing, package_folder

DESCRIPTION_CHARS = 79
"""the longest description in the listing (a 120-column terminal beside the 40-column names)"""


def register(sub: Any) -> None:
    parser = sub.add_parser("examples", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copy", type=Path, metavar="DIR", help="copy every example into DIR (made if missing)")
    parser.add_argument("--data", action="store_true", help="list the shipped data files (hybridsim:NAME) instead")
    parser.set_defaults(func=main)


def shipped_examples() -> list[Path]:
    """The example files (experiments and the files they name), relative to the examples folder."""
    root = package_folder("hybridsim.examples")
    return sorted(p.relative_to(root) for p in root.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.name != "__init__.py")


def main(args: argparse.Namespace) -> int:
    if args.data:
        print("\n".join(listing()))
        return 0
    root = package_folder("hybridsim.examples")
    files = shipped_examples()
    if args.copy is None:
        for path in (f for f in files if _is_experiment(root / f)):
            print(f"{path.as_posix():<40} {_description(root / path)}")
        print(f"({len(files)} files in {root}; hybridsim examples --copy DIR copies them)")
        return 0
    clash = [str(f) for f in files if (args.copy / f).exists()]
    if clash:
        raise UsageError(f"--copy: {args.copy} already holds {clash[0]}{' and more' if len(clash) > 1 else ''}; "
                         "give an empty or new folder")
    try:
        for f in files:
            (args.copy / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / f, args.copy / f)
    except OSError as exc:
        raise UsageError(f"--copy: cannot write into {args.copy}: {exc.strerror}") from None
    print(f"examples: {len(files)} files copied into {args.copy}; run one with hybridsim run {args.copy / 'sdof.toml'}")
    return 0


def _is_experiment(path: Path) -> bool:
    """Whether ``path`` is an experiment file (a TOML file with an [experiment] table), not a site's config."""
    return path.suffix == ".toml" and "[experiment]" in (line.strip() for line in path.read_text().splitlines())


def _description(path: Path, width: int = DESCRIPTION_CHARS) -> str:
    """What the example runs: the first sentence of its leading comment, shortened at a word (never mid-word)."""
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("#")), len(lines))
    block = []
    for line in lines[start:]:
        if not line.startswith("#"):
            break
        block.append(line.lstrip("#").strip())
    sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z(])", " ".join(block).strip(), maxsplit=1)[0]
    return textwrap.shorten(sentence, width, placeholder=" ...", break_on_hyphens=False)
