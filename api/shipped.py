"""Files shipped with hybridsim, named from any folder as ``hybridsim:NAME``.

``hybridsim:marths/ground_motion_elcentro.csv`` is the benchmark data (``hybridsim.coordinator``'s
``data/``, with its licence); ``hybridsim:opensees/marths_frame.py`` a shipped OpenSees model
(``hybridsim.modules.opensees``'s ``models/``).  The examples are ``hybridsim.examples``
(`hybridsim examples` lists and copies them).  The folders are found without importing any part
(this module imports neither the coordinator nor the modules), in the repository and in an
installed wheel alike.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

PREFIX = "hybridsim:"
ROOTS = {"opensees": ("hybridsim.modules.opensees", "models")}
"""first folder of a shipped name -> (package, folder in it); any other name is in the data folder"""
DATA = ("hybridsim.coordinator", "data")


def package_folder(package: str) -> Path:
    """The folder of ``package`` (without importing it)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{package} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def roots() -> list[Path]:
    """Every folder shipped files are in."""
    return [package_folder(p) / f for p, f in (DATA, *ROOTS.values())]


def is_shipped(name: object) -> bool:
    return isinstance(name, str) and name.startswith(PREFIX)


def shipped_path(name: str) -> Path:
    """The file a ``hybridsim:NAME`` names; FileNotFoundError (the message says why) if there is none."""
    relative = name.removeprefix(PREFIX)
    head, _, rest = relative.partition("/")
    package, folder = ROOTS.get(head, DATA)
    root = (package_folder(package) / folder).resolve()
    path = (root / (rest if head in ROOTS else relative)).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        raise FileNotFoundError(f"{name!r} does not exist among the files shipped with hybridsim "
                                "(`hybridsim examples --data` lists them)")
    return path


def listing() -> list[str]:
    """Every shipped file as its ``hybridsim:`` name."""
    names = []
    for package, folder in (DATA, *ROOTS.values()):
        root = package_folder(package) / folder
        head = next((k for k, v in ROOTS.items() if v == (package, folder)), "")
        names += [PREFIX + "/".join(filter(None, (head, p.relative_to(root).as_posix())))
                  for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts
                  and p.suffix in {".csv", ".json", ".py", ".AT2", ".at2", ".txt", ".md"} and p.name != "__init__.py"]
    return names


def resolve(value: str, base_dir: Path) -> Path:
    """``value`` as a path: a shipped file for ``hybridsim:NAME``, otherwise relative to ``base_dir``."""
    return shipped_path(value) if is_shipped(value) else Path(base_dir) / value
