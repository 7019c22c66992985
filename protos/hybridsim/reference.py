"""The configuration reference page (docs/config_reference.md), generated from the declarations.

Every module kind's keys (``hybridsim.modules.registry.KINDS``, each class's ``CONFIG``) and the experiment
file's ``[integrator]`` table (``hybridsim.coordinator.integrators.CONFIG``: ``kind`` chooses the scheme, whose
own ``CONFIG`` declares its options).  It is built here, at the namespace's level, because it documents both
sides and ``modules/`` must not import the coordinator; ``python -m hybridsim.modules.config_schema`` prints it.
"""

from __future__ import annotations

from hybridsim.coordinator.integrators import CONFIG as INTEGRATOR
from hybridsim.modules.registry import KINDS, module_schema

HEAD = ("# Configuration reference\n\n"
        "Generated from the declarations in the code (`python -m hybridsim.modules.config_schema > "
        "docs/config_reference.md`); `hybridsim site KIND --describe-config` prints one kind.  Unknown "
        "keys are errors everywhere; units are SI unless a key says otherwise.\n")
EXPERIMENT = ("# The experiment file\n\n"
              "The tables of an experiment file that choose a kind and take its options (the other tables: the "
              "docstring of `coordinator/experiment.py` and `examples/`).\n")


def page() -> str:
    """The page: a section per module kind, then the experiment file's ``[integrator]`` table."""
    seen: set[int] = set()
    sections = [HEAD, *(module_schema(kind).reference(2, seen) for kind in KINDS), EXPERIMENT,
                INTEGRATOR.reference(2, seen)]
    return "\n".join(sections)


def main() -> None:
    """Print :func:`page` (redirect it to docs/config_reference.md)."""
    print(page())
