"""The results recorder: every completed step reaches the run's HDF5 file, even when a run stops early.

One file per role:

- :mod:`.layout`: what the file holds (datasets, attributes, checkpoint slots), created and reopened;
- :mod:`.writer`: the writer process, the only one to write the file while the run goes;
- :mod:`.client`: the coordinator's side, :class:`Recorder` (rows shared, requests sent, replies taken);
- :mod:`.pacing`: when a real-time run's writer may work (one policy: only in the loop's sleep);
- :mod:`.shared`: the memory the two processes share (the ring of rows, the writer's activity board);
- :mod:`.read`: reading a results file, and adding records and annotations to a closed one;
- :mod:`.inputs`: what a run began with (SHA-256 of its configurations and files), compared by resume.

The file is written in SWMR mode, so it stays readable while the test runs and after a crash at any flush point.
"""

from hybridsim.coordinator.recorder.client import Recorder
from hybridsim.coordinator.recorder.layout import ResultsFileError
from hybridsim.coordinator.recorder.pacing import DEFERRED_ROWS, WriterPacing
from hybridsim.coordinator.recorder.read import (Checkpoint, annotate, read_attributes, read_checkpoint,
                                                 read_results, read_rows, scan_rows, write_records)

__all__ = ["Checkpoint", "DEFERRED_ROWS", "Recorder", "ResultsFileError", "WriterPacing", "annotate",
           "read_attributes", "read_checkpoint", "read_results", "read_rows", "scan_rows", "write_records"]
