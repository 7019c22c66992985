"""What a campaign runs besides an experiment file: the problems a campaign file's ``problem = NAME`` names.

:data:`SUBJECTS` is the registry (``name -> "package.module:Class"``); each class is a
:class:`~hybridsim.coordinator.campaign.subjects.base.Subject` made with no arguments.  Adding one is a
class beside its problem and one line here (docs/campaigns.md).
"""

from __future__ import annotations

SUBJECTS: dict[str, str] = {
    "marths": "hybridsim.coordinator.problems.marths.campaign:Trials",
    "marths-calibration": "hybridsim.coordinator.problems.marths.calibration:Fits",
}
