"""The experimental site: transfer-system kinematics, compensators, control backend, feedback force.

kinematics      the maRTHS coupler: frame (x, theta) <-> actuator strokes
compensators/   delay compensators behind one interface (none, RLS-AC, ...)
physical_frame  the frame model that turns measured motion into feedback forces
site            one site: coupler + a compensator per actuator + backend + feedback force
"""
