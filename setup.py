"""The folders of the repository mapped into one import name, ``hybridsim``.

The repository keeps the design's top-level folders (``coordinator/``, ``modules/``, ``protos/``);
the distribution installs them as ``hybridsim.coordinator``, ``hybridsim.modules``,
``hybridsim`` itself (the wire and the generated code) and ``hybridsim.examples`` (the example experiments), so nothing generic such as ``coordinator``
or ``modules`` lands in site-packages.  Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup

FOLDERS = {"hybridsim": "protos/hybridsim", "hybridsim.coordinator": "coordinator", "hybridsim.modules": "modules",
           "hybridsim.examples": "examples"}

setup(package_dir=FOLDERS,
      packages=[f"{name}.{sub}" if sub else name for name, folder in FOLDERS.items() for sub in ["", *find_packages(folder)]])
