"""An experimental site's records: per control sample (:class:`SiteRecord`, held in memory from the first sample
not stored yet), streamed to the coordinator's results file (:meth:`SiteRecords.stream`) and appended to the
site's own record file (``record = "site.h5"``, :meth:`SiteRecords.file`); a site on its own clock adds its
clock's per-sample and per-step logs, a plant daemon its DAQ log (``plant/...``)."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.experimental.clock import SAMPLE_COLUMNS, STEP_COLUMNS, SiteClock
from hybridsim.modules.rowlog import RowLog
from hybridsim.wire.contract import Record

RECORD_FIELDS = {"target_strokes": "target stroke of each actuator at sample k (mm; the last: held from the one before)",
                 "commands": "command sent at sample k, after the compensator (mm; the last: held)",
                 "measured_strokes": "stroke measured at sample k, before that sample's command acts (mm)",
                 "measured_loads": "load-cell force measured at sample k (N; zeros without load cells)",
                 "compensator_parameters": "each adaptive compensator's parameters as it computed sample k's command "
                                           "(its own units; the last: held)"}
"""what each per-sample record of the site holds"""


class SiteRecord:
    """Per control sample k: target strokes, commands (mm; sample k's command), measured strokes (mm) and, with
    ``load_cells``, the load-cell forces (N), one column per actuator (per load cell: ``cells``, default one per
    actuator); with ``parameters`` (their count) the adaptive compensators' parameters as they computed sample k's
    command (:meth:`~hybridsim.modules.experimental.compensators.base.Compensator.parameters`, side by side).

    It holds the samples from :attr:`first` on: :meth:`forget` drops earlier ones once they are stored
    elsewhere (the coordinator's results file, the site's record file), so a long run's record stays
    bounded (:class:`~hybridsim.modules.rowlog.RowLog`: no allocation once grown).  With ``keep`` False it
    holds nothing (nobody asked for a record).
    """

    FIELDS = ("target_strokes", "commands", "measured_strokes")

    def __init__(self, actuators: int = 2, load_cells: bool = False, capacity: int = 1024,
                 cells: int | None = None, keep: bool = True, parameters: int = 0) -> None:
        self.fields = (self.FIELDS + (("measured_loads",) if load_cells else ())
                       + (("compensator_parameters",) if parameters else ()))
        self.keep = keep
        widths = {"measured_loads": cells or actuators, "compensator_parameters": parameters}
        self.logs = {name: RowLog(widths.get(name, actuators), capacity if keep else 0) for name in self.fields}
        self.samples = 0
        """number of samples with a measurement"""

    @property
    def first(self) -> int:
        """the first sample held (the ones before were forgotten)"""
        return self.logs["measured_strokes"].first

    def rest(self, strokes_mm: np.ndarray, loads: np.ndarray) -> None:
        """The reading at rest: sample 0's measurement."""
        self.samples = 1
        if self.keep:
            self.logs["measured_strokes"].at(0)[:] = strokes_mm
            if "measured_loads" in self.logs:
                self.logs["measured_loads"].at(0)[:] = loads

    def sample(self, k: int, targets_mm: np.ndarray, commands_mm: np.ndarray, strokes_mm: np.ndarray,
               loads: np.ndarray, parameters: np.ndarray | None = None) -> None:
        """Sample k - 1's target strokes, command and compensator parameters, and the strokes and loads they led
        to, measured at k."""
        self.samples = k + 1
        if not self.keep:
            return
        logs = self.logs
        if k - 1 >= self.first:  # restarted at k (restored): sample k - 1 is not this record's
            logs["target_strokes"].at(k - 1)[:] = targets_mm
            logs["commands"].at(k - 1)[:] = commands_mm
            if parameters is not None:
                logs["compensator_parameters"].at(k - 1)[:] = parameters
        logs["measured_strokes"].at(k)[:] = strokes_mm
        if "measured_loads" in logs:
            logs["measured_loads"].at(k)[:] = loads

    def block(self, k: int, targets_mm: np.ndarray, commands_mm: np.ndarray, strokes_mm: np.ndarray,
              parameters: np.ndarray) -> None:
        """Samples k .. k + n - 1 at once, each as :meth:`sample` logs it (n rows each; no load cells)."""
        self.samples = k + len(strokes_mm)
        if self.keep:
            self.logs["target_strokes"].write(k - 1, targets_mm)
            self.logs["commands"].write(k - 1, commands_mm)
            self.logs["measured_strokes"].write(k, strokes_mm)
            if "compensator_parameters" in self.logs:
                self.logs["compensator_parameters"].write(k - 1, parameters)

    def hold(self, k: int) -> None:
        """Sample k ends the run (no step follows it, so no command is sent at it): its target and command are the
        ones the actuators hold, sample k - 1's, not unwritten rows (NaN), and so are the compensators'
        parameters."""
        for name in ("target_strokes", "commands", "compensator_parameters"):
            log = self.logs.get(name)
            if log is not None and self.keep and log.rows == k and k - 1 >= log.first:
                log.at(k)[:] = log.at(k - 1).copy()

    def array(self, name: str, samples: int | None = None, start: int = 0) -> np.ndarray:
        """A logged signal (samples x actuators): samples ``start`` .. ``samples`` - 1 (default: all measured;
        ``start`` at least :attr:`first`)."""
        stop = self.samples if samples is None else samples
        log = self.logs[name]
        if not self.keep:
            return log.values[:0].copy()
        if start < log.first:
            raise ValueError(f"site record: samples before {log.first} were stored and forgotten, not {start}")
        out = np.full((max(stop - start, 0), log.values.shape[1]), np.nan)  # rows not logged yet: NaN
        held = log.head(min(stop, log.rows), start)
        out[: len(held)] = held
        return out

    def restart(self, at: int) -> None:
        """Hold nothing; the next sample logged is ``at`` (a site restored from a checkpoint)."""
        for log in self.logs.values():
            log.restart(at)
        self.samples = at

    def forget(self, below: int) -> None:
        """Drop the samples before ``below`` (they are stored elsewhere)."""
        if self.keep:
            for log in self.logs.values():
                log.forget(min(below, self.samples))


class SiteRecords:
    """Where a site's samples go: the coordinator (``asked``: the session's ``records``), the record file
    (``path``), both or neither; samples both have are forgotten.  ``clock``: the site's own clock, if any."""

    def __init__(self, site: Any, control_dt: float, path: Path | None, asked: bool,
                 clock: SiteClock | None = None) -> None:
        self.site = site
        self.control_dt = control_dt
        self.path = path
        self.asked = asked
        self.clock = clock
        self.collected = 0
        """samples the coordinator has stored (it asks for the rows from there on)"""
        self.filed = 0
        """samples written to the record file"""

    def lock(self) -> contextlib.AbstractContextManager[Any]:
        """The site's own clock's lock (its thread logs samples into the record), if it runs on one."""
        return self.clock.lock if self.clock is not None else contextlib.nullcontext()

    def stream(self, since: int, final: bool, committed: int) -> list[Record]:
        """The rows from sample ``since`` on (``committed``: the last committed sample; its target and command
        are logged when the next step runs, so during the run it waits for the next collection); at the end
        (``final``) also each compensator's adapted parameters and a plant daemon's DAQ log."""
        rows = committed + (1 if final else 0)
        site, record = self.site, self.site.record
        if final:  # sample k's target and command come with step k + 1: at the end the last holds the one before
            record.hold(committed)
        self.collected = max(self.collected, since)
        self.forget(committed)
        out = []
        if record.keep and self.asked:
            rows = max(rows, record.first)  # restored at sample `first`: nothing before it to give, not an error
            first = min(max(since, record.first), rows)
            actuators = tuple(f"actuator_{i + 1}" for i in range(site.setup.actuators))
            cells = tuple(f"load_cell_{i + 1}" for i in range(site.setup.cells))
            out.append(Record("sample_time", self.control_dt * np.arange(first, rows, dtype=float)[:, None], ("s",),
                              ("t",), "time of control sample k (k dt)", first))
            for name in record.fields:
                columns = cells if name == "measured_loads" and len(cells) != len(actuators) else actuators
                columns = site.parameter_names if name == "compensator_parameters" else columns
                unit = {"measured_loads": "N", "compensator_parameters": "1"}.get(name, "mm")
                out.append(Record(name, record.array(name, rows, first), (unit,) * len(columns), columns,
                                  RECORD_FIELDS[name], first))
        own = getattr(site.backend, "records", None)
        if own is not None:  # a plant daemon's DAQ log, streamed as the site's record
            out += [replace(r, name=f"plant/{r.name}") for r in own(since, final)]
        if self.asked:
            out += self.clock_records(since, rows)
        return out + (self.parameters() if final else [])

    def parameters(self) -> list[Record]:
        """Each adaptive compensator's parameters at the end."""
        out = []
        for i, compensator in enumerate(self.site.compensators, 1):
            parameters = compensator.parameters()
            if parameters.size:
                out.append(Record(f"compensator_{i}/parameters", parameters.reshape(1, -1), ("1",) * parameters.size,
                                  tuple(f"p{j}" for j in range(parameters.size)),
                                  f"the adapted parameters of {compensator.name or 'compensator'} {i} at the end"))
        return out

    def clock_records(self, start: int, stop: int) -> list[Record]:
        """On its own clock, streamed as the site's record (from sample ``start`` to ``stop`` - 1): per control
        sample k >= 1 (row k - 1) its lateness, test time and mode (0 predicted, 1 corrected, 2 slowed, 3 held);
        per step (row j: the clock's step j + 1) that ended on one of these samples its end sample, the target's
        arrival, held samples, slowed, wall time."""
        if self.clock is None:
            return []
        samples, log = self.clock.sample_log, self.clock.step_log
        first = max(start - 1, samples.first, 0)
        ended = log.head()[:, 0]
        steps = slice(*np.searchsorted(ended, [start, stop]))
        return [Record("clock/samples", samples.head(max(stop - 1, first), first), ("us", "s", "1", "us"),
                       SAMPLE_COLUMNS, "per control sample k = 1, 2, ..: how late its tick started, the test time of "
                       "its command, what the command was (0 predicted, 1 corrected, 2 slowed, 3 held), how long the "
                       "sample took (command, plant, measurement)", first),
                Record("clock/steps", log.head()[steps], ("1", "1", "1", "1", "s"), STEP_COLUMNS,
                       "per step: the sample measured at its end, when its target arrived (share of the step), its "
                       "held samples, whether it was slowed (1), its wall time", log.first + steps.start)]

    def forget(self, committed: int) -> None:
        """Drop the samples both the coordinator (if it asks for records) and the record file have (the
        committed ones if neither keeps them)."""
        stored = [self.collected] if self.asked else []
        stored += [self.filed] if self.path is not None else []
        below = min(stored, default=committed)
        self.site.record.forget(below)
        if self.clock is not None:
            self.clock.forget(below)

    def file(self, stop: int) -> None:
        """Append the samples up to ``stop`` - 1 to the site's record file (the first call creates it), and the
        site clock's records of those samples."""
        import h5py

        assert self.path is not None
        record = self.site.record
        start = max(self.filed, record.first)
        with h5py.File(self.path, "a" if self.filed else "w") as f:
            f.attrs["control_dt"] = self.control_dt
            for name in record.fields:
                _append(f, name, start, record.array(name, stop, start))
            for clocked in self.clock_records(start, stop):
                _append(f, clocked.name, int(clocked.first_row or 0), clocked.values)
        self.filed = stop
        self.forget(stop - 1)


def _append(f: Any, name: str, start: int, values: np.ndarray) -> None:
    """Rows ``values`` at ``start`` of the growing dataset ``name`` of the open HDF5 file ``f`` (created at the
    first call: unfilled rows NaN)."""
    if name not in f:
        f.create_dataset(name, shape=(0, values.shape[1]), maxshape=(None, values.shape[1]),
                         chunks=(4096, values.shape[1]), dtype=np.float64, fillvalue=np.nan)
    f[name].resize(start + values.shape[0], axis=0)
    f[name][start:start + values.shape[0]] = values
