"""The experiment file's declaration: every table and key, with its type, unit, range and default.

One :class:`~hybridsim.modules.config_schema.Schema` per table, as every module kind declares its config:
:data:`EXPERIMENT` validates a parsed file before anything is built (one line naming the key and the fix)
and generates its part of docs/config_reference.md.  What spans keys or needs the file's other tables (a
vector with one value per DOF, a symmetric mass, a module name used twice, a file that exists) is checked
where the value is built, in :mod:`hybridsim.coordinator.experiment`.
"""

from __future__ import annotations

from typing import Any

from hybridsim.coordinator.integrators import CONFIG as INTEGRATOR
from hybridsim.coordinator.integrity.rules import INTEGRITY
from hybridsim.coordinator.motion import ACCELERATION_UNITS
from hybridsim.coordinator.stages import CONFIG as STAGE
from hybridsim.modules.config_schema import (Flag, Free, Integer, Key, Names, Number, Numbers, Schema, Table, Tables,
                                             Text)
from hybridsim.modules.network import NETWORK, TRANSPORT

POSITIVE = Number(minimum=0, open_minimum=True)
FILE = "relative to the experiment file, or hybridsim:NAME for a shipped file"
MATRIX_FILE = f"a CSV, Matrix Market .mtx or scipy.sparse .npz file (the last two kept sparse; {FILE})"
ADDRESS = Text(pattern=r"local|[^\s/]+:\d{1,5}", shown='HOST:PORT (e.g. lab.example.org:50051) or "local"')
"""where a module runs: ``"local"`` (a daemon the coordinator starts) or ``HOST:PORT``"""


RUN = Schema("[experiment]", "The run: its name and its integration step.", {
    "name": Key(Text(), "the run's name (the default results file is results/NAME.h5)", default="experiment"),
    "dt": Key(Number("s", minimum=0, open_minimum=True), "the integration step", required=True),
    "duration": Key(Number("s", minimum=0, open_minimum=True),
                    "how much of the ground motion to run (default: all of the record)"),
})

DAMPING = Schema("structure.damping", "Viscous damping: Rayleigh C = a M + b K_I (K_I: the modules' initial "
                 "stiffness from the pre-test), from (a, b) or from two frequencies and a ratio; or a full matrix. "
                 "None given: no damping.", {
                     "rayleigh": Key(Numbers(), "(a, b): a in 1/s, b in s"),
                     "rayleigh_omega": Key(Numbers("rad/s", element=POSITIVE),
                                           "two distinct circular frequencies with damping ratio zeta"),
                     "zeta": Key(Number(minimum=0, maximum=1, open_maximum=True),
                                 "the damping ratio at both frequencies of rayleigh_omega"),
                     "matrix": Key(Numbers("N*s/m", dims=(2,)), "the damping matrix, n x n over structure.dofs"),
                     "matrix_file": Key(Text(), f"the damping matrix as {MATRIX_FILE}"),
                 }, at_most_one=(("rayleigh", "rayleigh_omega", "matrix", "matrix_file"),),
                 together=(("rayleigh_omega", "zeta"),))

STRUCTURE = Schema("[structure]", "The structure over its global DOFs: mass, damping, where the ground shakes it.", {
    "dofs": Key(Names(), "the DOF names, each once (e.g. [\"x1\", \"x2\"])", required=True),
    "mass": Key(Numbers("kg", dims=(2,)), "the mass matrix, n x n, symmetric, no negative eigenvalue "
                "(kg*m^2 on rotations)"),
    "mass_diagonal": Key(Numbers("kg"), "one mass per DOF, each >= 0 (kg*m^2 on rotations)"),
    "mass_file": Key(Text(), f"the mass matrix as {MATRIX_FILE}; a sparse one makes the whole structure sparse "
                     "(K_I measured sparse, alpha-os, generalized-alpha-os, kr-alpha or cr factoring with SuperLU)"),
    "damping": Key(Table(DAMPING), "the damping model"),
    "influence": Key(Numbers(), "the ground acceleration's influence, one value per DOF (exactly one of it and "
                     "influence_dofs with [ground_motion]; none with [[excitation]])"),
    "influence_dofs": Key(Names(), "the DOFs the ground acceleration excites (influence 1, the others 0)"),
    "condense_massless": Key(Flag(), "integrate the DOFs with mass only; the others follow by static (Guyan) "
                             "recovery", default=False),
}, exactly_one=(("mass", "mass_diagonal", "mass_file"),), at_most_one=(("influence", "influence_dofs"),))

GROUND_MOTION = Schema("[ground_motion]", "The ground acceleration record, resampled to experiment.dt.", {
    "file": Key(Text(), f"a two-column CSV (time in s, acceleration) or a PEER .AT2 file ({FILE})", required=True),
    "units": Key(Text(tuple(ACCELERATION_UNITS)), "the CSV's acceleration units (an .AT2 file is in g)",
                 default="m/s^2"),
    "scale": Key(Number(), "a factor on the record"),
    "pga": Key(Number("m/s^2", minimum=0, open_minimum=True), "scale the record to this peak ground acceleration"),
}, at_most_one=(("scale", "pga"),))

EXCITATION = Schema("[[excitation]]", "One component of an excitation of several (instead of [ground_motion] and "
                    "structure.influence; coordinator/excitation.py): the load is -M sum_c r_c a_c(t - start_c), each "
                    "record resampled to experiment.dt, zero before its start and after its end; the run lasts to the "
                    "latest end (or experiment.duration).", {
                        "name": Key(Text(), "the component's name in the summary (default: its file's stem)"),
                        "file": Key(Text(), f"a two-column CSV (time in s, acceleration) or a PEER .AT2 file ({FILE})",
                                    required=True),
                        "units": Key(Text(tuple(ACCELERATION_UNITS)), "the CSV's acceleration units (an .AT2 file is "
                                     "in g; rad/s^2 for a rotational record)", default="m/s^2"),
                        "scale": Key(Number(), "a factor on the record"),
                        "pga": Key(Number("m/s^2", minimum=0, open_minimum=True), "scale the record to this peak"),
                        "influence": Key(Numbers(), "its influence vector r_c, one value per structure DOF"),
                        "influence_dofs": Key(Names(), "the DOFs it excites (influence 1, the others 0)"),
                        "start_s": Key(Number("s", minimum=0), "when it starts, a whole number of steps",
                                       default=0.0),
                    }, exactly_one=(("influence", "influence_dofs"),), at_most_one=(("scale", "pga"),))

TLS = Schema("modules[].tls", "TLS to a site at HOST:PORT (docs/security.md); paths relative to the experiment file.", {
    "ca": Key(Text(), "the CA that signed the site's certificate (PEM)", required=True),
    "cert": Key(Text(), "the coordinator's certificate, for mutual TLS (PEM)"),
    "key": Key(Text(), "the coordinator's private key (PEM)"),
}, together=(("cert", "key"),))

SCALE = Schema("modules[].scale", "Similitude at the module's boundary (coordinator/similitude.py): specimen over "
               "prototype factors; commands leave scaled (translations by length, rotations by 1, time by time) and "
               "measured forces come back divided (forces by force, moments by force * length), so the "
               "coordinator works at prototype scale. Absent: 1, 1, 1.", {
                   "length": Key(POSITIVE, "specimen length / prototype length", default=1.0),
                   "force": Key(POSITIVE, "specimen force / prototype force", default=1.0),
                   "time": Key(POSITIVE, "specimen time / prototype time", default=1.0),
               })

MODULE = Schema("[[modules]]", "One substructure: its kind, its configuration, where it runs.", {
    "name": Key(Text(), "the module's name, unique in the experiment", required=True),
    "kind": Key(Text(), "the module kind (`linear`, `spring`, ...: one section each on this page)", required=True),
    "config": Key(Free(), "the kind's configuration table (its section on this page)"),
    "config_file": Key(Text(), f"the configuration as a TOML or JSON file ({FILE})"),
    "address": Key(ADDRESS, "where it runs: absent in this process, \"local\" a daemon the coordinator starts, "
                   "HOST:PORT a site (then config may be left out: the site's own runs)"),
    "deadline_s": Key(Number("s", minimum=0, open_minimum=True), "how long a call to its site may take",
                      default=10.0),
    "tls": Key(Table(TLS), "TLS to a site at HOST:PORT"),
    "scale": Key(Table(SCALE), "the specimen's similitude factors (a scaled specimen; the coordinator at prototype "
                 "scale)"),
    "token_file": Key(Text(), f"a file holding the site's access token ({FILE}; docs/security.md)"),
    "transport": TRANSPORT,
    "network": Key(Table(NETWORK), "an emulated network path to a module at an address (docs/realtime.md)"),
}, at_most_one=(("config", "config_file"),))

OUTPUT = Schema("[output]", "The results file.", {
    "file": Key(Text(), "the results file (HDF5), relative to the folder the run starts in "
                "(default: results/NAME.h5)"),
    "checkpoint_every": Key(Integer(0, unit="steps"), "steps between checkpoints (0: none); `hybridsim resume` "
                            "continues from the last", default=0),
    "records": Key(Flag(), "the modules' own records (a site's per-sample log) into the results file; false: the "
                   "sites keep none", default=True),
})

PRETEST = Schema("[pretest]", "The pre-test that measures each module's initial stiffness K_I.", {
    "amplitude": Key(Number("m or rad", minimum=0, open_minimum=True), "the probe at each DOF", default=1e-5),
})

EVALUATION = Schema("[evaluation]", "A reference problem's criteria computed after the run and stored with it.", {
    "problem": Key(Text(), "the reference problem (`marths`)", required=True),
    "site": Key(Text(), "the name of the experimental site's module", required=True),
    "record": Key(Text(), "the benchmark's ground-motion record the run used (default: the problem's)"),
    "scale": Key(Number(minimum=0, open_minimum=True), "the record's scale the run used (default: the problem's)"),
})

REHEARSE = Schema("[rehearse]", "`hybridsim rehearse FILE`: the experiment's trials under its experimental site's "
                  "declared uncertainty before the specimen moves (docs/rehearse.md); `hybridsim run` ignores it.", {
                      "trials": Key(Integer(1, unit="trials"), "plants drawn from the uncertainty after the nominal "
                                    "one (--trials overrides)", default=10),
                      "duration": Key(Number("s", minimum=0, open_minimum=True), "how much of the record each trial "
                                      "runs (default: all of it)"),
                      "piston_area": Key(Numbers("m^2", (0, 1), POSITIVE), "the actuators' piston area, one for "
                                         "every actuator or one each: the flow Q = A v of the peak command velocity"),
                      "gain_margin": Key(Flag(), "seek the gain margin by bisection: maRTHS, the largest loss of "
                                         "plant gain at which the nominal trial completes (about 8 more runs); a "
                                         "virtual-lab site, the largest factor on its actuators' gain at which "
                                         "its loop stays stable (docs/rehearse.md)", default=True),
                      "gain_margin_tolerance": Key(Number(minimum=0, maximum=0.5, open_minimum=True), "the "
                                                   "bisection's tolerance, a fraction of the plant's gain",
                                                   default=0.02),
                      "gain_margin_bracket": Key(Numbers("", (1,), POSITIVE), "a virtual-lab site: [stable, "
                                                 "unstable] gain factors the margin is sought between",
                                                 default=[1.0, 4.0]),
                      "random": Key(Free(), "the declared uncertainty of an experiment with a virtual-lab site: "
                                    "dotted experiment keys (quoted) to distributions, as [campaign.random] "
                                    "(docs/campaigns.md); trial i draws them from seed i"),
                      "delay_margin": Key(Flag(), "seek the delay margin by bisection: maRTHS, the largest added "
                                          "actuator delay (whole samples) at which the nominal trial completes "
                                          "tracking within delay_margin_tracking (about 9 more runs); a "
                                          "virtual-lab site, the largest delay (s) added to its actuators at "
                                          "which its loop stays stable (docs/rehearse.md)", default=True),
                      "delay_margin_tracking": Key(Number("%", minimum=0, open_minimum=True), "the RMS tracking "
                                                   "error (J2, % of the target's RMS) the delay margin holds the "
                                                   "run under: the tracking a lab accepts", default=10.0),
                      "delay_margin_bracket": Key(Numbers("s", (1,), Number(minimum=0)), "a virtual-lab site: "
                                                  "[stable, unstable] added delays the margin is sought between",
                                                  default=[0.0, 0.05]),
                      "delay_margin_tolerance": Key(Number("s", minimum=0, open_minimum=True), "a virtual-lab "
                                                    "site: the delay margin's bisection tolerance", default=1e-4),
                      "margin_duration": Key(Number("s", minimum=0, open_minimum=True), "a virtual-lab site: the "
                                             "free vibration each margin run follows after its pulse (several "
                                             "periods of the structure)", default=4.0),
                  })

EXPERIMENT = Schema("The experiment file", "One TOML file per experiment (`hybridsim run FILE`); examples in "
                    "`examples/`.  Tables in the order they are read.", {
                        "experiment": Key(Table(RUN), "the run", required=True),
                        "structure": Key(Table(STRUCTURE), "the structure", required=True),
                        "ground_motion": Key(Table(GROUND_MOTION), "the ground motion (one record)"),
                        "excitation": Key(Tables(EXCITATION), "several excitation components, each with its "
                                          "influence, scale and start"),
                        "stages": Key(Tables(STAGE), "the test program: static, dynamic, quasi-static and "
                                      "free-vibration stages in order (default: one dynamic stage)"),
                        "integrator": Key(Table(INTEGRATOR), "the time integration scheme (default: alpha-os)"),
                        "modules": Key(Tables(MODULE), "the substructures", required=True),
                        "output": Key(Table(OUTPUT), "the results file"),
                        "pretest": Key(Table(PRETEST), "the pre-test"),
                        "evaluation": Key(Table(EVALUATION), "a reference problem's criteria after the run"),
                        "integrity": Key(Table(INTEGRITY), "the indicators' thresholds and actions while it runs"),
                        "rehearse": Key(Table(REHEARSE), "the rehearsal's trials (`hybridsim rehearse`)"),
                    }, at_most_one=(("ground_motion", "excitation"),))


def default(schema: Schema, table: dict[str, Any], key: str) -> Any:
    """``table[key]``, or the declared default when the key is absent."""
    return table.get(key, schema.keys[key].default)
