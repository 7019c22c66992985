"""A hold that ended with the run: the lagging SDOF of test_hold.py held in the coordinator's process or at an
``address = "local"`` daemon is not resumed until the operator clears it on the command line (``--clear-hold``,
recorded in the results file); then it resumes from its checkpoint at step 200 to its end, as the held site
daemon of test_hold_daemon.py does after its operator's clear. A site daemon at HOST:PORT keeps its own hold:
the option does not clear it."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import h5py
import numpy as np
import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.recorder import read_attributes
from hybridsim.coordinator.recorder.holds import cleared, resume_command
from hybridsim.coordinator.simulation import resume_run, run_experiment
from tests.coordinator.integrity.test_hold import THETA, lagging_sdof

WHY = "integrity: column's energy error"


@pytest.mark.parametrize("where", [{}, {"address": "local"}], ids=["in-process", "local-daemon"])
def test_a_hold_that_ended_with_the_run_is_cleared_on_the_resume_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
        where: dict[str, str]) -> None:
    held = tmp_path / "held.h5"
    with pytest.raises(RunStopped, match=f"held since {WHY}"):
        run_experiment(lagging_sdof(tmp_path, "held", {"kind": "none"}, {"energy_error": THETA, "action": "hold"},
                                    checkpoint_every=100, **where))
    step = json.loads(read_attributes(held)["stop"])["step"]  # the step the held gate refused
    with h5py.File(held) as f:
        kept = f["displacement"][()]
    assert resume_command(held, read_attributes(held)) == f"`hybridsim resume {held} --clear-hold column`"
    capsys.readouterr()
    assert main(["resume", str(held), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"site column held the run (step {step} refused) since {WHY}" in err
    assert err.endswith(f"hybridsim resume {held} --clear-hold column"), err
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    with caplog.at_level("WARNING", "hybridsim.coordinator.integrity.monitor"):
        result = resume_run(held, clear_hold=["column"])
    assert (result.summary["resumed_from_step"], result.summary["steps"]) == (200, 300)  # the checkpoint before 221
    assert "column's energy error acted after the checkpoint, before the run stopped; it does not act again" in (
        caplog.text)
    attrs = read_attributes(held)
    assert attrs["status"] == "completed"
    [record] = json.loads(attrs["cleared_holds"])
    assert (record["site"], record["step"], record["resumed_from_step"]) == ("column", step, 200)
    assert record["reason"].startswith(WHY) and f"at step {step - 1}" in record["reason"]
    cleared_at = datetime.datetime.fromisoformat(record["time_utc"])
    assert before <= cleared_at <= datetime.datetime.now(datetime.timezone.utc)
    assert resume_command(held, attrs) == f"`hybridsim resume {held}`"  # completed: no hold left to clear
    with h5py.File(held) as f:  # the rows up to the checkpoint are the held run's
        np.testing.assert_array_equal(f["displacement"][:201], kept[:201])


def test_the_option_clears_no_site_daemons_hold_and_names_only_a_held_site(tmp_path: Path) -> None:
    """The held in-process run's file against the same experiment with its site at a lab's address, and names
    that clear nothing: refused in one line before any site is reached."""
    held = tmp_path / "held.h5"
    with pytest.raises(RunStopped):
        run_experiment(lagging_sdof(tmp_path, "held", {"kind": "none"}, {"energy_error": THETA, "action": "hold"},
                                    checkpoint_every=100))
    attrs = read_attributes(held)
    remote = lagging_sdof(tmp_path, "remote", {"kind": "none"}, {}, address="127.0.0.1:50999").modules
    assert cleared(held, attrs, remote, [], 200) == {}  # the daemon refuses the run itself until cleared there
    table = {**json.loads(attrs["experiment_table"]), "modules": [{"name": "column", "address": "127.0.0.1:50999"}]}
    assert resume_command(held, {**attrs, "experiment_table": json.dumps(table)}) == (
        f"`hybridsim site-control 127.0.0.1:50999 --clear` at the site, then `hybridsim resume {held}`")
    with pytest.raises(UsageError, match=r"^--clear-hold column: the site daemon at 127.0.0.1:50999 keeps its own "
                                         r"hold; an operator clears it there \(hybridsim site-control 127.0.0.1:50999 "
                                         r"--clear\)"):
        cleared(held, attrs, remote, ["column"], 200)
    local = lagging_sdof(tmp_path, "local", {"kind": "none"}, {}).modules
    with pytest.raises(UsageError, match="^--clear-hold beam: .* did not end held at site beam .*drop the option"):
        cleared(held, attrs, local, ["beam"], 200)


def test_a_measured_overload_in_process_is_a_hold_the_resume_needs_cleared(tmp_path: Path) -> None:
    """The actuator's force limit at 5 kN (k A = 4.8e5 N/m x 10.3 mm): its load cell trips the gate, which holds
    the site; cleared on the resume, the run goes on from step 200 and trips again where it did (the same
    response: nothing about the specimen changed)."""
    experiment = lagging_sdof(tmp_path, "tripped", {"kind": "none"}, {}, checkpoint_every=100)
    experiment.modules[0].config["actuators"][0]["force"] = 5000.0
    with pytest.raises(RunStopped, match="the site is held since actuator 1: load cell reads") as tripped:
        run_experiment(experiment)
    stop = json.loads(read_attributes(tmp_path / "tripped.h5")["stop"])
    with pytest.raises(UsageError, match=f"site column held the run \\(step {stop['step']} refused\\) since actuator "
                                         "1: load cell reads .* --clear-hold column$"):
        resume_run(tmp_path / "tripped.h5")
    with pytest.raises(RunStopped) as again:
        resume_run(tmp_path / "tripped.h5", clear_hold=["column"])
    assert str(again.value) == str(tripped.value)
    attrs = read_attributes(tmp_path / "tripped.h5")
    assert json.loads(attrs["stop"]) == stop
    assert [r["reason"] for r in json.loads(attrs["cleared_holds"])] == [stop["cause"].split(" since ", 1)[1]]
