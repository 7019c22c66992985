"""The campaign file (``hybridsim campaign CAMPAIGN.toml``): its declaration and the runs it names.

``[campaign]`` names the experiment (or a problem whose runs it varies, :data:`SUBJECTS`: the maRTHS benchmark's
trials, its calibration's fits) and what varies: ``[campaign.grid]`` (dotted keys to lists of
values, full factorial), ``[campaign.records]`` (records for an incremental dynamic analysis: each
is one more grid key, ``ground_motion.file`` by default), ``[campaign.random]`` (seeded draws,
:mod:`.draws`) and ``trials`` (seeds 0..trials-1).  :func:`load` validates the file and every run
before any run starts (one line naming the key and the fix).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridsim.coordinator.campaign.draws import DISTRIBUTION, with_draws
from hybridsim.coordinator.campaign.grid import Run, expand
from hybridsim.coordinator.campaign.subjects import SUBJECTS
from hybridsim.coordinator.campaign.subjects.base import Subject
from hybridsim.coordinator.campaign.subjects.experiment import ExperimentFile
from hybridsim.coordinator.config_text import parse_config_text, read_config_text
from hybridsim.coordinator.errors import UsageError
from hybridsim.modules.config_schema import ConfigError, Free, Integer, Key, Names, Schema, Table, Text
from hybridsim.registry import load as load_entry

RECORDS = Schema("[campaign.records]", "The records of an incremental dynamic analysis (with the intensities in "
                 "[campaign.grid], e.g. `\"ground_motion.scale\" = [0.2, 0.4, 0.8]`): every record is run at every "
                 "grid point; paths relative to the campaign file, or hybridsim:NAME for a shipped one.", {
                     "files": Key(Names(), "the record files"),
                     "folder": Key(Text(), "a folder of records (every file matching `pattern`, sorted)"),
                     "pattern": Key(Text(), "the records' file names in `folder`", default="*"),
                     "key": Key(Text(), "the experiment key each record is set to", default="ground_motion.file"),
                 }, exactly_one=(("files", "folder"),))

CAMPAIGN = Schema("[campaign]", "One experiment (or a problem's runs) run many times (docs/campaigns.md); each run "
                  "with its own results file OUT/<run id>.h5.", {
                      "experiment": Key(Text(), "the experiment file (relative to the campaign file)"),
                      "problem": Key(Text(tuple(SUBJECTS)), "instead of an experiment, a problem whose runs vary: "
                                     "marths (the benchmark's trials; seed 0 the nominal plant, seed s its uncertain "
                                     "plant s) or marths-calibration (the RLS-AC open-loop fits); the grid's keys "
                                     "are its settings (docs/campaigns.md)"),
                      "grid": Key(Free(), "dotted experiment keys (quoted) to lists of values, run as a full "
                                  "factorial; a number indexes a list of tables (`modules.0.config.KEY`); "
                                  "with `problem`, its settings"),
                      "records": Key(Table(RECORDS), "records for an incremental dynamic analysis"),
                      "random": Key(Free(), "dotted experiment keys (quoted) to distributions "
                                    "(campaign.random.KEY), drawn anew for every seed"),
                      "trials": Key(Integer(1, unit="seeds"), "every grid point run with seeds 0..trials-1",
                                    default=1),
                      "seed": Key(Integer(0), "the campaign's seed: a run of seed s draws from (seed, s)",
                                  default=0),
                  }, exactly_one=(("experiment", "problem"),))

CAMPAIGN_FILE = Schema("The campaign file", "`hybridsim campaign FILE`: one `[campaign]` table; its random keys "
                       f"are declared by {DISTRIBUTION.title}.", {
                           "campaign": Key(Table(CAMPAIGN), "the campaign", required=True),
                       })


@dataclass(frozen=True)
class Campaign:
    """What a campaign file runs (an experiment file, a problem's runs) and every run of it."""

    subject: Subject
    runs: list[Run]


def _records(table: dict[str, Any], here: Path, experiment: Path) -> dict[str, list[str]]:
    """The records as one grid key: each path as the experiment names files (relative to its folder)."""
    if "files" in table:
        files = [f if f.startswith("hybridsim:") else str((here / f).resolve()) for f in table["files"]]
    else:
        folder = (here / table["folder"]).resolve()
        files = sorted(str(p) for p in folder.glob(table.get("pattern", "*")) if p.is_file())
        if not files:
            raise UsageError(f"campaign.records: no file matches {table.get('pattern', '*')!r} in {folder}; "
                             "name a folder of records or give files = [...]")
    names = [f if f.startswith("hybridsim:") else os.path.relpath(f, experiment.parent) for f in files]
    return {table.get("key", "ground_motion.file"): names}


def load(path: Path) -> Campaign:
    """The campaign of file ``path``, every run checked (an experiment's parsed); UsageError (one line) on bad input."""
    try:
        table = parse_config_text(read_config_text(path), "TOML")
        CAMPAIGN_FILE.check(table)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the campaign file ({exc.strerror})") from None
    except (ValueError, ConfigError) as exc:
        raise UsageError(f"{path}: {exc}") from None
    campaign, here = table["campaign"], path.resolve().parent
    subject: Subject = (ExperimentFile(here / campaign["experiment"]) if "experiment" in campaign
                        else load_entry(SUBJECTS, campaign["problem"])())
    grid = dict(campaign.get("grid", {}))
    if "records" in campaign and "problem" in campaign:
        raise UsageError(f"{path}: campaign.records are files of an experiment; a problem names its records in "
                         "[campaign.grid], e.g. record = [\"elcentro\", \"kobe\"]")
    if "records" in campaign:
        grid.update(_records(campaign["records"], here, here / campaign["experiment"]))
    runs = with_draws(expand(grid, campaign.get("trials", 1)), campaign.get("random", {}), campaign.get("seed", 0))
    subject.check(runs)
    return Campaign(subject, runs)

