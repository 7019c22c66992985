"""The live test monitor: observers watch a running test and the operator holds, resumes or aborts it.

``hybridsim run EXPERIMENT --monitor HOST:PORT`` serves hybridsim.v1.Monitor
(:mod:`.session`, :mod:`.service`): a decimated stream of the step history
(:mod:`.publisher`, :mod:`.frames`) and token-guarded Hold/Resume/Abort.
``hybridsim monitor COORDINATOR`` serves the browser page (:mod:`.web`);
``hybridsim report RESULTS.h5`` writes the same plots of a finished run
(:mod:`.report`).  The page's plotting library, uPlot, is vendored in
``static/`` with its licence.
"""
