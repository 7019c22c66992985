"""The experimental site: OpenFresco's families (setups, controls, compensators) composed by the site behind its gate.

module          the site behind the module interface (sessions, the ledger's hooks, checkpoints)
config          its declared table and what follows from it
site, gate      one control sample (setup -> compensators -> gate -> control -> setup's inverse -> forces)
stepping        lockstep or the site's own clock (clock, command_generation)
records         the per-sample record, streamed and filed
setups/, controls/, compensators/   the families: one file and one registry line per member
forces, physical_frame, kinematics, guards   load cells, the maRTHS frame model and coupler, runaway guards
"""
