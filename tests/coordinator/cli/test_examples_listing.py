"""`hybridsim examples` lists the experiments a user can run, in every folder, and not the sites' configs."""

from __future__ import annotations

import signal
import subprocess
import sys

from hybridsim.coordinator.cli import main
from tests.conftest import EXAMPLES


def test_the_listing_names_the_setup_experiments_and_leaves_out_site_configs(capsys):
    assert main(["examples"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if not line.startswith("(")]
    assert "sdof.toml" in listed and "setups/one_actuator.toml" in listed
    assert "opensees_site_upper.toml" not in listed and "setups/one_actuator_site.toml" not in listed


def test_each_description_is_its_first_sentence_or_stops_at_a_whole_word(capsys):
    assert main(["examples"]) == 0
    root = EXAMPLES
    for line in capsys.readouterr().out.splitlines()[:-1]:
        name, description = line.split(None, 1)
        comment = " ".join(" ".join(part.lstrip("#").split()) for part in (root / name).read_text().splitlines()
                           if part.startswith("#"))
        assert len(description) <= 79, line
        if description.endswith(" ..."):  # shortened: what is kept is the comment's start, up to a whole word
            kept = description.removesuffix(" ...")
            assert comment.startswith(kept) and comment[len(kept)] == " ", line
        else:
            assert comment.startswith(description) and description.endswith((".", ")")) or description in comment, line


def test_a_reader_that_goes_away_ends_the_listing_quietly():
    """`hybridsim examples | head -1`: the listing stops without a traceback, with the shell's SIGPIPE status."""
    listing = subprocess.Popen([sys.executable, "-m", "hybridsim", "examples"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, bufsize=0)
    assert listing.stdout.read(1)
    listing.stdout.close()  # the reader is gone: the next write raises BrokenPipeError
    _, stderr = listing.communicate(timeout=60)
    assert stderr == b"" and listing.returncode == 128 + signal.SIGPIPE
