"""The folders of the repository mapped into one import name, ``hybridsim``.

The repository keeps the design's top-level folders; the distribution installs ``api/`` as ``hybridsim`` itself
(the package's face: the public API, ``python -m hybridsim``, the registry helper, shipped files),
``coordinator/`` and ``modules/`` as ``hybridsim.coordinator`` and ``hybridsim.modules``, the contract's folder
``protos/hybridsim/`` as ``hybridsim.v1`` (the generated code) and ``hybridsim.wire``, and ``examples/`` as
``hybridsim.examples``, so nothing generic such as ``coordinator`` or ``modules`` lands in site-packages.
Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup

FOLDERS = {"hybridsim": "api", "hybridsim.v1": "protos/hybridsim/v1", "hybridsim.wire": "protos/hybridsim/wire",
           "hybridsim.coordinator": "coordinator", "hybridsim.modules": "modules", "hybridsim.examples": "examples"}

setup(package_dir=FOLDERS,
      packages=[f"{name}.{sub}" if sub else name for name, folder in FOLDERS.items() for sub in ["", *find_packages(folder)]])
