"""What the monitor shows of a run: the response DOFs, each module's DOFs and limits, the decimation.

A module's DOF names are the ones it describes itself with (the run's ``module_descriptions``, as the
results file records them: an experimental site's ``setup.dof``, an OpenSees module's ``[[control]]``
names, a linear module's ``dofs``); a run described by nothing (an old results file) falls back to the
``dofs`` list of the module's config, and a module named by neither is shown by position (``name#i``)
without a command.  A module's safety limits (the ``limits`` table of its config, see
:mod:`hybridsim.modules.limits`) give the margins the monitor shows: how much of the
displacement and force limit of each DOF is left.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hybridsim.coordinator.experiment import Experiment
from hybridsim.coordinator.monitor.indicators import IndicatorLayout, indicator_layouts
from hybridsim.wire.contract import ModuleError
from hybridsim.modules.limits import SafetyLimits

MAX_POINTS = 4000
"""samples of the whole record the monitor aims at (the decimation follows from it)"""
MAX_RESPONSE_DOFS = 8
ACTUATED_KINDS = frozenset({"experimental", "openfresco", "simcor"})
"""module kinds whose displacement is what a lab's actuators reached (an experimental site; a client of a lab's
protocol): the monitor shows their tracking error and synchronization subspace"""


@dataclass(frozen=True)
class ModuleLayout:
    name: str
    dofs: tuple[str, ...]
    where: str
    command_index: np.ndarray | None
    """global indices of the module's DOFs (None when the DOFs are not named)"""
    displacement_limit: np.ndarray | None = None
    """max |d| per DOF (m, rad; inf where not set); None without a limits table"""
    force_limit: np.ndarray | None = None
    """max |f| per DOF (N, N*m; inf where not set)"""
    kind: str = ""

    @property
    def actuated(self) -> bool:
        """Its displacement is what actuators reached (see ACTUATED_KINDS)."""
        return self.kind in ACTUATED_KINDS

    @property
    def ndof(self) -> int:
        return len(self.dofs)


@dataclass(frozen=True)
class RunLayout:
    experiment: str
    integrator: str
    dt: float
    """integration step (s)"""
    total_steps: int
    response_dofs: tuple[str, ...]
    response_index: np.ndarray
    modules: tuple[ModuleLayout, ...]
    decimation: int
    realtime: bool = False
    """paced to the wall clock: a step over dt is late (otherwise only information)"""
    indicators: tuple[IndicatorLayout, ...] = ()
    """the integrity monitor's per-step datasets (a run with [integrity])"""

    @property
    def module_width(self) -> int:
        """Number of module DOFs over all modules (the width of a frame's module vectors)."""
        return sum(m.ndof for m in self.modules)


def run_layout(*, experiment: str, integrator: str, dt: float, total_steps: int, dofs: Sequence[str],
               shaken: Sequence[str], modules: Sequence[tuple[str, Mapping[str, Any], str]],
               widths: Mapping[str, int], described: Mapping[str, Mapping[str, Any]] | None = None,
               realtime: bool = False, max_points: int = MAX_POINTS) -> RunLayout:
    """The layout of a run.

    ``shaken`` are the DOFs the ground shakes (nonzero influence): the response shows them (or the
    first DOFs when there are none), at most MAX_RESPONSE_DOFS.  ``modules`` are (name, experiment
    config, where it runs); ``widths`` the number of DOFs of each module (from the history arrays);
    ``described`` each module's description as the run recorded it (``module_descriptions``).
    """
    response = tuple((list(shaken) or list(dofs))[:MAX_RESPONSE_DOFS])
    lookup = {d: i for i, d in enumerate(dofs)}
    described = described or {}
    return RunLayout(experiment, integrator, dt, total_steps, response, np.array([lookup[d] for d in response]),
                     tuple(module_layout(name, config, widths[name], where, lookup, described.get(name))
                           for name, config, where in modules),
                     max(1, math.ceil(total_steps / max_points)), realtime)


def layout_of_experiment(experiment: Experiment, arrays: Mapping[str, np.ndarray],
                         described: Mapping[str, Mapping[str, Any]] | None = None, *, realtime: bool = False,
                         max_points: int = MAX_POINTS) -> RunLayout:
    """The layout of a run of ``experiment`` whose history arrays are ``arrays`` (``described``: see run_layout)."""
    influence = np.column_stack([c.influence for c in experiment.components])  # every excitation component's
    shaken = [d for d, r in zip(experiment.dofs, influence) if np.any(r != 0.0)]
    modules = [(m.name, m.config, "in process" if m.address is None else
                "local daemon" if m.address == "local" else m.address) for m in experiment.modules]
    widths = {m.name: arrays[f"modules/{m.name}/displacement"].shape[1] for m in experiment.modules}
    layout = run_layout(experiment=experiment.name, integrator=experiment.integrator, dt=experiment.dt,
                        total_steps=experiment.steps, dofs=experiment.dofs, shaken=shaken, modules=modules,
                        widths=widths, described=described, realtime=realtime, max_points=max_points)
    return dataclasses.replace(layout, indicators=indicator_layouts(arrays, experiment.integrity,
                                                                    {m.name: m.dofs for m in layout.modules}))


def module_layout(name: str, config: Mapping[str, Any], width: int, where: str, lookup: Mapping[str, int],
                  described: Mapping[str, Any] | None = None) -> ModuleLayout:
    """The layout of one module of ``width`` DOFs from its description, else its experiment config (see the
    module docstring)."""
    named = [d["name"] for d in described["dofs"]] if described else config.get("dofs")
    kind = str(described.get("kind", "")) if described else str(config.get("kind", ""))
    if isinstance(named, list) and len(named) == width and all(d in lookup for d in named):
        dofs, index = tuple(named), np.array([lookup[d] for d in named], dtype=int)
    else:
        dofs, index = tuple(f"{name}#{i}" for i in range(width)), None
    limits = config.get("limits", ((described or {}).get("config") or {}).get("limits"))  # else the site's own
    if limits is None:
        return ModuleLayout(name, dofs, where, index, kind=kind)
    try:
        safety = SafetyLimits.from_config(limits, width)
    except ModuleError:  # the run refuses them when it builds the module; a report shows none
        return ModuleLayout(name, dofs, where, index, kind=kind)
    return ModuleLayout(name, dofs, where, index, safety.displacement, safety.force, kind)
