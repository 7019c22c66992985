"""The configuration reference page (docs/config_reference.md), generated from the declarations.

Every module kind's keys (``hybridsim.modules.registry.KINDS``, each class's ``CONFIG``), then the experiment
file, every table and key of it (:data:`hybridsim.coordinator.experiment_schema.EXPERIMENT`; ``[integrator]``'s
``kind`` chooses the scheme, whose own ``CONFIG`` declares its options), then the campaign file
(:data:`hybridsim.coordinator.campaign.config.CAMPAIGN_FILE`).  It is built in the coordinator because
it documents both sides and ``modules/`` must not import the coordinator.  Regenerate it with
``python -m hybridsim.coordinator.reference > docs/config_reference.md`` (a test fails when it drifts).
"""

from __future__ import annotations

from hybridsim.coordinator.campaign.config import CAMPAIGN_FILE
from hybridsim.coordinator.campaign.draws import DISTRIBUTION
from hybridsim.coordinator.experiment_schema import EXPERIMENT
from hybridsim.modules.registry import KINDS, module_schema

COMMAND = "python -m hybridsim.coordinator.reference > docs/config_reference.md"
HEAD = ("# Configuration reference\n\n"
        f"Generated from the declarations in the code (`{COMMAND}`); `hybridsim site KIND --describe-config` "
        "prints one kind.  Unknown keys are errors everywhere; units are SI unless a key says otherwise.  First "
        "each module kind (a site's configuration, or `config` of an experiment's `[[modules]]`), then the "
        "experiment file, then the campaign file.\n")


def page() -> str:
    """The page: a section per module kind, every table of the experiment file, then of the campaign file."""
    seen: set[int] = set()
    sections = [HEAD, *(module_schema(kind).reference(2, seen) for kind in KINDS), EXPERIMENT.reference(1, seen),
                CAMPAIGN_FILE.reference(1, seen), DISTRIBUTION.reference(2, seen)]
    return "\n".join(sections)


def main() -> None:
    """Print :func:`page` (redirect it to docs/config_reference.md)."""
    print(page())


if __name__ == "__main__":
    main()
