"""Force sources: between a site's interface and its setup, where the interface forces come from.

:class:`LoadCells` (any rig): the DOF forces J(q)^T f of the measured load-cell forces f in the measured
configuration q.  The maRTHS benchmark's frame model fed by the measured motion is the other source
(:class:`hybridsim.modules.experimental.physical_frame.FrameFeedback`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from hybridsim.modules.experimental.setups.base import Setup
from hybridsim.wire.contract import ModuleError


class ForceSource(Protocol):
    """Between the interface and the setup: which interface DOFs are the setup's, the response to a
    measurement."""

    def setup_target(self, target: np.ndarray) -> np.ndarray:
        """The setup's DOF target of an interface target (rig sign)."""
        ...

    def settling(self) -> bool:
        """Whether the site's start goes on with another sample at rest (a force-controlled DOF's target ramped in,
        :mod:`hybridsim.modules.experimental.force_control`)."""
        ...

    def respond(self, strokes: np.ndarray, loads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(interface displacements, forces) of the strokes (m) and load-cell forces (N) measured at a sample."""
        ...

    def probe(self, command: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(displacements, forces) of a quasi-static probe at an interface command; nothing moves."""
        ...

    def state(self) -> Any: ...

    def set_state(self, state: Any) -> None: ...


CANNOT_PROBE = ("this control cannot probe the specimen before the test: give initial_stiffness (a DOFs x DOFs "
                "matrix) for the pre-test")
"""why a site with load-cell forces and a control without a virtual specimen in its process cannot answer the
coordinator's pre-test"""


class LoadCells:
    """DOF forces from the load cells through the setup: r = J(q)^T f, q the measured pose.

    A pre-test probe asks ``probe_loads`` (a virtual lab's specimen) for the load-cell forces at the
    strokes of the probed pose, or uses ``stiffness`` (DOFs x DOFs: r = K d) when a lab cannot probe.
    """

    def __init__(self, setup: Setup, probe_loads: Callable[[np.ndarray], np.ndarray] | None = None,
                 stiffness: np.ndarray | None = None) -> None:
        self.setup = setup
        self.probe_loads = probe_loads
        self.stiffness = stiffness

    def setup_target(self, target: np.ndarray) -> np.ndarray:
        return target

    def settling(self) -> bool:
        return False

    def respond(self, strokes: np.ndarray, loads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pose = self.setup.pose(strokes)
        return pose, self.setup.dof_forces(pose, loads)

    def probe(self, command: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.stiffness is not None:
            return command, self.stiffness @ command
        if self.probe_loads is None:
            raise ModuleError(f"experimental module: {CANNOT_PROBE}")
        return command, self.setup.dof_forces(command, self.probe_loads(self.setup.strokes(command)))

    def state(self) -> None:
        return None

    def set_state(self, state: None) -> None:
        """Stateless."""
