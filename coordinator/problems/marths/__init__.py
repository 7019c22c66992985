"""The maRTHS benchmark (Condori Uribe et al. 2023): its data, structure, physical side, loop and criteria.

``data`` reads the shipped files; ``structure`` builds the frame models and the Newmark map; ``parts``
turns the benchmark's numbers into the generic plant and experimental-site configs; ``loop`` runs
the benchmark tick by tick; ``evaluation`` computes J1..J10; ``campaign`` makes the nominal and
uncertain trials runs of the campaign machinery (serially, on a process pool, on Dask); ``daemons`` runs one
trial with its sites as local daemons; ``hybrid`` evaluates a coordinator-driven run;
``calibration`` redoes the RLS-AC offline calibration; ``identify`` identifies the frame's members
for the OpenSees model; ``report`` writes the tables, histories and plots.
"""
