"""The coordinator: experiment files, the structural model over condensed DOFs, the integrators,
the partition and the run, results, the monitor, the ``hybridsim`` command and the reference
problems.  The public entry points are the top package's: ``hybridsim.load_experiment`` and
``hybridsim.run``."""
