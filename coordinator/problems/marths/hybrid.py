"""J1..J10 of a maRTHS run driven by the coordinator (examples/marths.toml), not by the benchmark's own loop.

The coordinator's results file gives the numerical substructure's response
(row n at t_n = n dt, DOFs in the benchmark's SAP equation order) and the
experimental site's interface estimate (x-hat, theta-hat); the site's own
record gives the target and measured actuator strokes of every control
sample.  With them and the reference structure's response to the same
record, :func:`hybridsim.coordinator.problems.marths.evaluation.criteria` computes the
benchmark's criteria exactly as for ``hybridsim benchmark marths``.  The
coordinator integrates with alpha-OS, not with the benchmark's Newmark
tick order, so the figures are close to, not bit-for-bit, the published loop's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.problems.marths import evaluation, loop, parts
from hybridsim.coordinator.problems.marths.campaign import TrialResult
from hybridsim.coordinator.problems.marths.report import format_table
from hybridsim.coordinator.problems.marths.structure import FEEDBACK_DOFS
from hybridsim.coordinator.recorder import read_results
from hybridsim.modules.experimental.clock import step_rows
from hybridsim.shipped import package_folder

NDOF = 29
EXAMPLES = package_folder("hybridsim.examples")


def design_card(folder: Path, duration: float, *, dt: float | None = None, daemons: bool = True,
                plant_daemon: bool = True, site: Mapping[str, Any] | None = None) -> Any:
    """examples/marths.toml over its first ``duration`` s (s), its module files copied to ``folder``.

    ``dt`` (s) other than the benchmark's 1/1024 s makes the site run dt * 1024 control samples per
    step and drops the evaluation (the criteria are defined at 1024 Hz integration); ``daemons =
    False`` runs the frame and the site in process; ``plant_daemon = False`` puts the plant inside the
    site's process, as a lab's real-time controller has it; ``site``: more keys of the site's table (its clock).
    """
    import json
    import shutil
    import tomllib

    from hybridsim.coordinator.experiment import parse_experiment

    shutil.copytree(EXAMPLES / "marths", folder / "marths", dirs_exist_ok=True)
    site_table = json.loads((folder / "marths" / "site.json").read_text())
    if not plant_daemon:
        site_table["backend"] = {"plant": site_table["backend"]["daemon"]}
    (folder / "marths" / "site.json").write_text(json.dumps({**site_table, **(site or {})}))
    table = tomllib.loads((EXAMPLES / "marths.toml").read_text())
    table["experiment"]["duration"] = duration
    if dt is not None and dt != table["experiment"]["dt"]:
        table["experiment"]["dt"] = dt
        table.pop("evaluation")
    table["output"]["file"] = str(folder / f"marths-{'daemons' if daemons else 'inprocess'}.h5")
    for module in table["modules"]:
        if not daemons:
            module.pop("address")
    return parse_experiment(table, base_dir=folder)


@dataclass(frozen=True)
class _Logged:
    target_strokes: np.ndarray
    measured_strokes: np.ndarray
    estimate: np.ndarray
    numerical: np.ndarray
    reference: np.ndarray


def evaluate(experiment: Any, results: Path) -> dict[str, Any]:
    """``{"J": {J1..J10}, "max_command_volts": [v1, v2], "realizable": bool, "table": str}`` of a finished run."""
    spec = experiment.evaluation
    site_name, record_name, scale = spec.get("site"), spec.get("record", "elcentro"), float(spec.get("scale", 0.4))
    if len(experiment.dofs) != NDOF:
        raise UsageError(f"evaluation: the maRTHS criteria need the 29 DOFs of the benchmark in SAP order, "
                         f"the experiment has {len(experiment.dofs)}")
    stored = read_results(results)
    ticks = stored["displacement"].shape[0]
    ground = loop.ground_acceleration(record_name, scale, ticks)
    if not np.allclose(stored["ground_acceleration"], ground, rtol=0, atol=1e-12 * np.max(np.abs(ground))):
        raise UsageError(f"evaluation: the run's ground motion is not the benchmark's {record_name} at {scale}; "
                         "set evaluation.record and evaluation.scale to the experiment's")
    expected = [experiment.dofs[i] for i in FEEDBACK_DOFS]
    with h5py.File(results, "r") as f:
        # The site's records (/modules/<site>/records/, handed to the coordinator at the end of the run):
        # row k holds, as the benchmark logs tick k, the target and command sent at sample k (the
        # coordinator's predicted target of t_{k+1}, computed from a_g up to t_k like the benchmark's
        # tick-k target) and the strokes measured at sample k, before that command acts.
        # The last row has no target (there is no step after the record), so strokes use N - 1 rows.
        group = f[f"modules/{site_name}"]
        if "records" not in group:
            why = group.attrs.get("records_error", "it keeps none")
            raise UsageError(f"evaluation: the results file holds no records of site {site_name!r} ({why})")
        records = group["records"]
        strokes = {name: records[name][()] for name in ("target_strokes", "commands", "measured_strokes")}
        if "clock" in records:  # a site on its own clock: the samples its steps ended on (held ones between)
            strokes = step_rows(strokes, records["clock/steps"][()])
        strokes = {name: values[: ticks - 1] for name, values in strokes.items()}
        dofs = [str(d) for d in group.attrs.get("dofs", [])]
    estimate = stored[f"modules/{site_name}/displacement"].copy()
    if dofs != expected:
        raise UsageError(f"evaluation: site {site_name!r} must have the DOFs {expected} (SAP 27, 21, 29)")
    estimate[:, 0] *= 1000.0
    estimate[:, 1:] = -estimate[:, 1:]  # SAP -> frame sign, as the benchmark logs x-hat (mm), theta-hat
    log = _Logged(strokes["target_strokes"], strokes["measured_strokes"], estimate,
                  loop._logged(stored["displacement"][:, list(loop.OUTPUT_DOFS)]),
                  np.array(loop.reference_response(record_name, scale, ticks)))
    daq = parts.daq()
    volts = np.max(np.abs(daq.volts(strokes["commands"])), axis=0).tolist()
    criteria = evaluation.criteria(log, parts.SAMPLE_RATE)
    row = TrialResult(loop.RunSpec(record=record_name, scale=scale), criteria, volts, daq.realizable(volts), 0.0)
    table = format_table([row], f"maRTHS criteria of the coordinator's run ({record_name} x {scale:g}, alpha-OS)")
    return {"J": criteria, "max_command_volts": volts, "realizable": row.realizable, "table": table}

