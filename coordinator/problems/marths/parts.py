"""The physical side of the maRTHS benchmark, built from its data: plant, sensors, DAQ, site (§7-§11).

The benchmark's numbers become the config tables of the generic `plant` and
`experimental` modules (:func:`plant_config`, :func:`site_config`); the
in-process loop builds its lab and site from the very same tables as the
site daemons do, so both run the same arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.marths import data
from hybridsim.coordinator.problems.marths.structure import FRAME_SIGN, feedback_frame
from hybridsim.modules.experimental.compensators.narx import measurement_filter
from hybridsim.modules.experimental.kinematics import Coupler
from hybridsim.modules.plant.actuators import Actuators
from hybridsim.modules.plant.daq import CommandDaq
from hybridsim.modules.plant.identified_plant import IdentifiedPlant, UncertainRoot, Zpk
from hybridsim.modules.plant.lab import VirtualLab
from hybridsim.modules.plant.module import build_actuators, build_lab
from hybridsim.modules.plant.sensors import band_limited_sigma

SAMPLE_RATE = float(data.constants()["timing"]["fs_hz"])
"""fs = 1024 Hz (§2)"""
DT = 1.0 / SAMPLE_RATE
COMPENSATORS = ("none", "rls", "inverse", "narx")
NARX_EXCITATION_NOISE_DEVIATIONS = 10.0
"""the NARX gate (``-g``): re-estimate while the RMS of the window's commands is at least this many sensor-noise
standard deviations (docs/narx.md)"""
BENCHMARK_NARX: dict[str, Any] = {"order": 4, "window": 1024, "ridge": 1e-7, "filter_command": True, "gated": True}
"""the benchmark's ``narx`` compensator: the best case of the NARX study, ``narx4-L1024-ridge1e-07-fg``"""
PLANTS = ("nominal", "uncertain", "ideal", "ideal-delay")
"""ideal: a perfect actuator in the same tick (the loop iterates); ideal-delay: one sample late"""


def _plant_constants() -> dict[str, Any]:
    return data.constants()["control_plant"]


def identified_plant() -> IdentifiedPlant:
    """The nominal 2x2 zpk plant of §8.1 (mm -> mm)."""
    c = _plant_constants()
    frame = tuple(data.complex_of(p) for p in c["frame_poles_rad_s"])
    col1 = frame + tuple(complex(p) for p in c["col1_poles_rad_s"])
    col2 = frame + tuple(complex(p) for p in c["col2_poles_rad_s"])
    zeros1 = tuple(complex(z) for z in c["col1_zeros_rad_s"])
    gains = c["gains"]
    h11 = Zpk(zeros1, col1, gains["H11"])
    h21 = Zpk(zeros1, col1, gains["H21"])
    h12 = Zpk((complex(c["h12_zero_rad_s"]),), col2, gains["H12"])
    h22 = Zpk((complex(c["h22_zero_rad_s"]),), col2, gains["H22"])
    return IdentifiedPlant(((h11, h12), (h21, h22)))


def uncertain_roots() -> tuple[UncertainRoot, ...]:
    """The nine uncertain roots in the draw order of §8.2, with their relative standard deviations."""
    c = _plant_constants()
    s = c["uncertainty_relative_std"]
    frame_pole = data.complex_of(c["frame_poles_rad_s"][0])
    if frame_pole.imag >= 0:
        raise ValueError("benchmark data: the first frame pole should be (-50 - 63j) 2 pi")
    return (
        UncertainRoot(complex(c["col1_zeros_rad_s"][0]), s["col1_zeros"]),
        UncertainRoot(complex(c["col1_zeros_rad_s"][1]), s["col1_zeros"]),
        UncertainRoot(complex(c["col1_poles_rad_s"][0]), s["col1_poles"]),
        UncertainRoot(complex(c["col1_poles_rad_s"][1]), s["col1_poles"]),
        UncertainRoot(frame_pole, s["frame_pole"]),
        UncertainRoot(complex(c["h12_zero_rad_s"]), s["h12_zero"]),
        UncertainRoot(complex(c["col2_poles_rad_s"][0]), s["col2_poles"]),
        UncertainRoot(complex(c["col2_poles_rad_s"][1]), s["col2_poles"]),
        UncertainRoot(complex(c["h22_zero_rad_s"]), s["h22_zero"]),
    )


def uncertain_plant(seed: int) -> IdentifiedPlant:
    """An uncertain plant: ``default_rng(seed).standard_normal(9)`` used in the order of §8.2 (§15)."""
    roots = uncertain_roots()
    return identified_plant().perturbed(roots, np.random.default_rng(seed).standard_normal(len(roots)))


def actuators(plant: str, seed: int | None = None) -> Actuators:
    """The actuator dynamics of a plant kind: nominal (the shipped ss), uncertain (``seed``), or ideal."""
    return build_actuators(plant_config(plant, seed, False, 0)["actuators"], 2, DT)


def noise_sigma_mm() -> float:
    """sigma = sqrt(noise power / Ts) = 0.0123935 mm (§9)."""
    return band_limited_sigma(data.constants()["sensor_noise"]["noise_power_parameter"], DT)


def _daq_table(in_loop: bool = False) -> dict[str, Any]:
    c = data.constants()["daq"]
    return {"gains": [c["v2d_gain1_mm_per_V"], c["v2d_gain2_mm_per_V"]],
            "offsets": [c["v2d_const1_mm"], c["v2d_const2_mm"]],
            "corrections": [c["correction_gain1"], c["correction_gain2"]],
            "limit": c["sat_limit_V"], "quantum": c["quantization_interval"], "in_loop": in_loop}


def daq(in_loop: bool = False) -> CommandDaq:
    """The command DAQ of §9 (logged only unless ``in_loop``)."""
    t = _daq_table(in_loop)
    return CommandDaq(tuple(t["gains"]), tuple(t["offsets"]), tuple(t["corrections"]), t["limit"], t["quantum"],
                      in_loop)


def plant_config(plant: str, plant_seed: int | None, noise: bool, noise_seed: int, shared_noise: bool = True,
                 daq_in_loop: bool = False, gain: float = 1.0) -> dict[str, Any]:
    """The `plant` module config of one run (ideal plants are noise-free whatever ``noise`` says, §17.4);
    ``gain`` scales the plant's output (a gain error of the actuators: the rehearsal's gain margin)."""
    if plant in ("ideal", "ideal-delay"):
        if gain != 1.0:
            raise ValueError(f"an ideal plant has no gain error: plant gain must be 1, not {gain}")
        actuator_table: dict[str, Any] = {"model": "ideal"}
    else:
        a, b, c = (data.nominal_plant_state_space() if plant == "nominal"
                   else _uncertain_state_space(plant, plant_seed))
        actuator_table = {"model": "state-space", "a": a.tolist(), "b": b.tolist(), "c": (gain * c).tolist()}
    sigma = noise_sigma_mm() if noise and plant not in ("ideal", "ideal-delay") else 0.0
    return {"dt": DT, "units_per_metre": 1000.0, "dofs": ["actuator_1", "actuator_2"], "actuators": actuator_table,
            "noise": {"sigma": sigma, "seed": noise_seed, "shared": shared_noise}, "daq": _daq_table(daq_in_loop)}


def _uncertain_state_space(plant: str, seed: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if plant != "uncertain":
        raise ValueError(f"unknown plant {plant!r}; use one of {', '.join(PLANTS)}")
    if seed is None:
        raise ValueError("an uncertain plant needs its seed")
    return uncertain_plant(seed).state_space()


def lab(plant: str, plant_seed: int | None, noise: bool, noise_seed: int, shared_noise: bool = True,
        daq_in_loop: bool = False, gain: float = 1.0) -> VirtualLab:
    """The virtual lab of one run, built from its :func:`plant_config`."""
    return build_lab(plant_config(plant, plant_seed, noise, noise_seed, shared_noise, daq_in_loop, gain))


def coupler() -> Coupler:
    """The coupler of §7 with the benchmark's rounded angles."""
    return Coupler.from_attachments(**_coupler_table())


def _coupler_table() -> dict[str, Any]:
    c = data.constants()["coupler"]
    return {"offset": c["xv1_m"], "heights": (c["yv1_m"], c["yv2_m"]), "angles_deg": (c["alpha1_deg"], c["alpha2_deg"])}


def compensator_tables(kind: str, delays_s: Sequence[float] | None = None) -> list[dict[str, Any]]:
    """One compensator table per actuator for a kind of :data:`COMPENSATORS`.

    ``none``; ``rls`` (initial parameters as shipped, §11.2); ``inverse`` from the assumed delay of each
    actuator, ``delays_s`` (s; the benchmark's: J1 of the uncompensated run, ``marths.assumed_delays``);
    ``narx``: :data:`BENCHMARK_NARX`.
    """
    if kind == "none":
        return [{"kind": "none"}, {"kind": "none"}]
    if kind == "rls":
        params = data.rls_initial_parameters()
        rls = data.constants()["controller_rlsac"]
        return [{"kind": "rls", "theta0": params[f"theta0_{i}"], "p0": params[f"P0_{i}"],
                 "filter_b": rls["butterworth"]["b"], "filter_a": rls["butterworth"]["a"],
                 "forgetting": rls["forgetting_factor"]} for i in (1, 2)]
    if kind == "inverse":
        if delays_s is None or len(delays_s) != 2:
            raise ValueError("compensator 'inverse' needs the assumed delay of each of the two actuators")
        return [{"kind": "inverse", "delay": float(d), "sample_period": DT} for d in delays_s]
    if kind == "narx":
        return [narx_table(**BENCHMARK_NARX) for _ in range(2)]
    raise ValueError(f"unknown compensator {kind!r}; use one of {', '.join(COMPENSATORS)}")


def narx_table(order: int, window: int, ridge: float = 0.0, products: Sequence[Sequence[int]] = (),
               filter_command: bool = False, gated: bool = False) -> dict[str, Any]:
    """A NARX compensator table with the definition's measurement filter (5th order, 6 Hz) at fs.

    ``filter_command`` and ``gated`` are the two changes of the NARX study's ``-fg`` cases (docs/narx.md):
    the same filter on the commands, and parameters held while the window's commands stay below
    :data:`NARX_EXCITATION_NOISE_DEVIATIONS` sensor-noise deviations.
    """
    b, a = measurement_filter(SAMPLE_RATE)
    return {"kind": "narx", "order": order, "window": window, "ridge": ridge,
            "products": [list(p) for p in products], "filter_b": b, "filter_a": a, "filter_command": filter_command,
            "excitation": narx_excitation_mm() if gated else 0.0}


def narx_excitation_mm() -> float:
    """The NARX gate's threshold: ten sensor-noise deviations, 0.124 mm."""
    return NARX_EXCITATION_NOISE_DEVIATIONS * noise_sigma_mm()


def guard_tables() -> list[dict[str, float]]:
    """The runaway guard of each actuator (``hybridsim.modules.experimental.guards.Limits``): the DAQ's 3.8 V saturation.

    volts = u / (cg g) - c / g for a command u in mm (§9).
    """
    t = _daq_table()
    return [{"volts": t["limit"], "volts_per_unit": 1.0 / (cg * g), "volts_offset": -c / g}
            for g, c, cg in zip(t["gains"], t["offsets"], t["corrections"])]


SITE_DOFS = ("x_27", "theta_21", "theta_29")
"""the site's DOFs in the numerical substructure's namespace (SAP equation numbers, SAP sign)"""


def site_config(compensator: str, backend: dict[str, Any] | None = None, record: str | None = None,
                delays_s: Sequence[float] | None = None, guard: bool = True) -> dict[str, Any]:
    """The `experimental` module config of the benchmark's site (interface DOFs U27, U21, U29, SAP sign).

    ``delays_s``: the assumed delays of inverse compensation; ``guard``: each compensator inside
    the 3.8 V runaway guard of :func:`guard_tables`.
    """
    config: dict[str, Any] = {
        "dt": DT, "dofs": list(SITE_DOFS), "kinds": ["translation", "rotation", "rotation"],
        "signs": FRAME_SIGN.tolist(), "coupler": _coupler_table(),
        "compensators": compensator_tables(compensator, delays_s), "frame": asdict(feedback_frame()),
        "backend": backend or {}}
    if guard:
        config["guards"] = guard_tables()
    if record is not None:
        config["record"] = record
    return config
