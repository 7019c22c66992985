"""Delay compensators, one per actuator, behind :class:`~hybridsim.modules.experimental.compensators.base.Compensator`.

base     the interface
none     no compensation (command = target)
filters  direct-form-II filters and the Butterworth design
rls      RLS adaptive compensation (RLS-AC)
"""
