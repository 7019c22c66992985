"""OpenSees substructures: an openseespy model file driven by imposed displacements at its control DOFs.

See ``docs/opensees.md`` for how a lab writes and serves its own substructure.
"""

from hybridsim.modules.opensees.module import OpenSeesModule

__all__ = ["OpenSeesModule"]
