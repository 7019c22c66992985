"""Experimental setups: the rig between a site's control DOFs and its actuators (OpenFresco's ES* family).

A setup is one small class (one file per kind, one line in :mod:`.kinds`) behind
:class:`~hybridsim.modules.experimental.setups.base.Setup`.  Rules for writing one:

- ``dofs`` names the control DOFs (``Dof``: translation in m or rotation in rad),
  ``actuators`` is the number of strokes; the geometry is SI and given at rest.
- ``strokes(q)`` is the forward map, exact for large displacements: the change of
  each actuator's length from rest (m, extension positive).
- ``jacobian(q)`` is d strokes / d q in the configuration q (actuators x DOFs).
- ``pose(strokes)`` is the inverse from measured strokes: closed form where one
  exists, else the base class's Newton iteration (tolerance, iteration count in
  ``iterations``, :class:`UnreachablePose` when it does not converge).
- ``dof_forces(q, loads)`` maps load-cell forces (N, along each actuator, pushing
  positive) to the DOF forces J(q)^T loads: what the actuators apply to the
  specimen, by virtual work (the base class does it from ``jacobian``).
- ``from_config(table)`` builds the kind from its config table and refuses an
  unknown or missing key with one line naming it.

kinds               the registry: ``kind = "..."`` -> class
base                the interface, the Newton inverse, config helpers
rigid               a rigid loading body (plane or space) driven by two-point actuators
none, linear        identity; a given matrix
one_actuator, two_actuators_2d, three_actuators_2d, inverted_v_brace, four_actuators_3d
                    OpenFresco's planar family and a four-actuator 3-D head
loading_platform    a six-actuator crosshead (6 DOF, Stewart type)
marths_coupler      the maRTHS benchmark's coupler
"""
