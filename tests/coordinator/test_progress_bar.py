"""The run's progress bar: redrawn in place on a terminal, plain lines in a log, its line ended on an early stop."""

from __future__ import annotations

import io

from hybridsim.coordinator.pacing import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_stopped_run_leaves_no_open_line():
    stream = Terminal()
    bar = ProgressBar(stream)
    bar(10, 100)  # the run stops here (Ctrl-C, a refused step)
    bar.end()
    stream.write("hybridsim run: interrupted\n")
    assert stream.getvalue().splitlines()[-1] == "hybridsim run: interrupted"
    assert stream.getvalue().startswith("\r[")


def test_a_finished_bar_ends_its_line_once():
    stream = Terminal()
    bar = ProgressBar(stream)
    bar(100, 100)
    bar.end()
    assert stream.getvalue().count("\n") == 1


def test_in_a_log_it_writes_whole_lines_and_few_of_them():
    stream = io.StringIO()
    bar = ProgressBar(stream, log_every_s=60.0)
    for done in range(1, 1001):
        bar(done, 1000)
    bar.end()
    lines = stream.getvalue().split("\n")
    assert "\r" not in stream.getvalue()
    assert len(lines) == 3 and lines[2] == ""  # the first call and the last, each a whole line
    assert lines[0].startswith("[" + "." * 30 + "] 1/1000 steps, ")
    assert lines[1].startswith("[" + "#" * 30 + "] 1000/1000 steps, ")


def test_a_stopped_run_ends_its_line_on_the_steps_of_the_last_call_not_of_the_last_redraw():
    stream = Terminal()
    bar = ProgressBar(stream)
    for done in range(1, 501):  # within a tenth of a second: only the first is drawn
        bar(done, 1000)
    bar.end()
    assert stream.getvalue().split("\r")[-1].startswith("[" + "#" * 15 + "." * 15 + "] 500/1000 steps, ")
    assert stream.getvalue().endswith("\n") and stream.getvalue().count("\n") == 1
