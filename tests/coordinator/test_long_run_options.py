"""benchmarks/long_run.py refuses options that cannot give its figures in one line, exit 2, before running anything
(a negative --marths-newmark-s ran the whole maRTHS record under newmark; a negative --seconds stopped with a
traceback after building its record)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "long_run.py"


@pytest.mark.parametrize("options, message", [
    (["--marths-newmark-s", "-2"], "--marths-newmark-s must be >= 0 (0 skips it), not -2.0"),
    (["--seconds", "-1"], "--seconds must be >= 0 (0 skips it), not -1.0"),
    (["--realtime-s", "nan"], "--realtime-s must be >= 0 (0 skips it), not nan"),
    (["--newmark-repeats", "7"], "--newmark-repeats must be a multiple of 10 (its first and last tenth are whole "
                                 "records), not 7"),
    (["--in-process-repeats", "15"], "--in-process-repeats must be a multiple of 10 (its first and last tenth are "
                                     "whole records), not 15"),
    (["--repeats", "0"], "--repeats and --in-process-repeats must be > 0 with --seconds (the matrix's rows)"),
])
def test_an_option_that_cannot_give_the_figures_is_one_line_exit_2(options: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), *options], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"long_run.py: error: {message}\n")
