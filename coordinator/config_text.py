"""A configuration's text (an experiment file, a module's ``config_file``, a site's ``--config``): its size capped,
parsed as TOML or JSON, every failure one line (a nesting deeper than the parsers' recursion included); the number
of modules, of structure DOFs and of a module's streamed records a run accepts (:data:`MAX_MODULES`, :data:`MAX_DOFS`,
:data:`MAX_RECORDS`).

The cap is measured (TOML of 16-number rows, one core of a 2-core VM, load 2.6): 16 MiB parses in 4.3 s with a peak
of 62 MiB; 64 MiB took 20 s and 211 MiB, and a 1 GiB file 2.2 GB.  The largest configuration hybridsim ships is
7 KB; matrices and records go in their own files (CSV, .mtx, .npz), which have their own cap.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

MAX_CONFIG_TEXT_BYTES = 16 * 2**20
"""the largest configuration text read (bytes)"""

MAX_MODULES = 2000
"""the most modules a run accepts: measured where its results file is written (one spring DOF each, 20 steps with two
checkpoints, in process, load 3.7): 2,000 modules ran in 18.5 s and read back whole; 2,500 failed in HDF5's SWMR
metadata cache ('Child entry doesn't have a flush dependency parent array' on the first rows, the writer then
SIGSEGV closing the file), with checkpoints or without: what fails is the number of per-step datasets written
together (two a module: 4,010 at 2,000 modules wrote, 5,010 at 2,500 did not), not the file's datasets (8,028 at
2,000 modules with their checkpoint slots wrote, 5,028 at 2,500 without did not)"""

MAX_DOFS = 12_000
"""the most structure DOFs a run accepts: what breaks first is the memory a run keeps for its rows, not HDF5.  A run
keeps 8,192 rows twice (its window and the ring shared with the writer) of 4 numbers per structure DOF and 2 per
module DOF, 8 bytes each: 0.75 MiB per DOF (:func:`hybridsim.coordinator.recorder.dof_cost.kept_bytes`), 8.8 GiB at
12,000 DOFs, 36.6 GiB at 50,000, beyond the 23 GiB of the 2-core VM the figures come from.  A real write through the
writer (``python benchmarks/writer_dofs.py``: 256 rows of one module owning every DOF, a window of 64 rows) did not
break: 50,000 DOFs 45 ms a row, 100,000 107 ms, 200,000 147 ms, 500,000 611 ms (file 5.9 GB, writer peak 3.5 GB),
load 5.7-8; past the memory, the writer's time per row is the limit (HDF5's own is a chunk of 4 GiB: 2.1 million
DOFs at 256 rows a chunk).  The cap keeps the 10,092-DOF sparse frame of the long test in."""


def rows_refusal(ndof: int, module_dofs: int) -> str | None:
    """The one-line refusal of a run whose rows hold more numbers than the DOF cap's (4 a structure DOF, 2 a module
    DOF: :data:`MAX_DOFS` DOFs each in one module), or None; ``module_dofs``: the modules' DOFs summed."""
    numbers, cap = 4 * ndof + 2 * module_dofs, 6 * MAX_DOFS
    if numbers <= cap:
        return None
    return (f"modules: {module_dofs} module DOFs beside {ndof} structure DOFs make rows of {numbers} numbers, more "
            f"than the {cap} of the DOF cap ({MAX_DOFS} DOFs, each in one module); give each DOF to fewer modules")

MAX_RECORDS = 2000
"""the most streamed records a module may give a run (each one dataset the writer fills during the run, one module's
at a time, then flushes): a real write (``python benchmarks/writer_records.py``: one module, 4 columns a record,
1,024 rows in 4 blocks with a checkpoint each, load 2.4-2.6) of 2,000 records took 5.8 s and read back whole, 3,000
9.5 s; 4,000 crashed the writer (SIGSEGV, HDF5's metadata cache as past :data:`MAX_MODULES`)"""


def read_config_text(path: Path) -> str:
    """The text of configuration file ``path``; OSError, or ValueError (one line) past the cap."""
    size = path.stat().st_size
    if size > MAX_CONFIG_TEXT_BYTES:
        raise ValueError(f"{path} is {size / 2**20:.0f} MiB, larger than the {MAX_CONFIG_TEXT_BYTES // 2**20} MiB a "
                         "configuration may be; put matrices and records in their own files (CSV, .mtx, .npz)")
    return path.read_text(errors="replace")


def parse_config_text(text: str, kind: str) -> Any:
    """``text`` parsed as ``kind`` ("TOML" or "JSON"); ValueError naming the line and column, or the nesting."""
    try:
        return json.loads(text) if kind == "JSON" else tomllib.loads(text)
    except RecursionError:
        raise ValueError("arrays or tables nested deeper than the parser can follow; flatten them") from None
