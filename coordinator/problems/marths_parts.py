"""The physical side of the maRTHS benchmark, built from its data: plant, sensors, DAQ, site (§7-§11).

Each builder returns the generic objects of ``modules/plant`` and
``modules/experimental`` configured with the benchmark's numbers, so the
same objects serve the in-process loop and the site daemons.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coordinator.problems import marths_data
from coordinator.problems.marths_structure import FRAME_SIGN, feedback_frame
from modules.experimental.compensators.base import Compensator
from modules.experimental.compensators.none import NoCompensation
from modules.experimental.compensators.rls import RlsCompensator
from modules.experimental.kinematics import Coupler
from modules.experimental.physical_frame import FeedbackForce
from modules.experimental.site import ExperimentalSite
from modules.plant.actuators import Actuators, InstantActuators, LinearActuators
from modules.plant.daq import CommandDaq
from modules.plant.identified_plant import IdentifiedPlant, UncertainRoot, Zpk
from modules.plant.lab import VirtualLab
from modules.plant.sensors import SensorNoise, band_limited_sigma

SAMPLE_RATE = float(marths_data.constants()["timing"]["fs_hz"])
"""fs = 1024 Hz (§2)"""
DT = 1.0 / SAMPLE_RATE
COMPENSATORS = ("none", "rls")
PLANTS = ("nominal", "uncertain", "ideal", "ideal-delay")
"""ideal: a perfect actuator in the same tick (the loop iterates); ideal-delay: one sample late"""


def _plant_constants() -> dict[str, Any]:
    return marths_data.constants()["control_plant"]


def identified_plant() -> IdentifiedPlant:
    """The nominal 2x2 zpk plant of §8.1 (mm -> mm)."""
    c = _plant_constants()
    frame = tuple(marths_data.complex_of(p) for p in c["frame_poles_rad_s"])
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
    frame_pole = marths_data.complex_of(c["frame_poles_rad_s"][0])
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
    if plant == "nominal":
        return LinearActuators.rk4(*marths_data.nominal_plant_state_space(), DT)
    if plant == "uncertain":
        if seed is None:
            raise ValueError("an uncertain plant needs its seed")
        return LinearActuators.rk4(*uncertain_plant(seed).state_space(), DT)
    if plant in ("ideal", "ideal-delay"):
        return InstantActuators(2)
    raise ValueError(f"unknown plant {plant!r}; use one of {', '.join(PLANTS)}")


def noise_sigma_mm() -> float:
    """sigma = sqrt(noise power / Ts) = 0.0123935 mm (§9)."""
    return band_limited_sigma(marths_data.constants()["sensor_noise"]["noise_power_parameter"], DT)


def daq(in_loop: bool = False) -> CommandDaq:
    """The command DAQ of §9 (logged only unless ``in_loop``)."""
    c = marths_data.constants()["daq"]
    return CommandDaq(gains=(c["v2d_gain1_mm_per_V"], c["v2d_gain2_mm_per_V"]),
                      offsets=(c["v2d_const1_mm"], c["v2d_const2_mm"]),
                      corrections=(c["correction_gain1"], c["correction_gain2"]),
                      limit=c["sat_limit_V"], quantum=c["quantization_interval"], in_loop=in_loop)


def lab(plant: str, plant_seed: int | None, noise: bool, noise_seed: int, shared_noise: bool = True,
        daq_in_loop: bool = False) -> VirtualLab:
    """The virtual lab of one run (ideal plants are noise-free whatever ``noise`` says, §17.4)."""
    sigma = noise_sigma_mm() if noise and plant not in ("ideal", "ideal-delay") else 0.0
    return VirtualLab(actuators(plant, plant_seed), SensorNoise(sigma, noise_seed, 2, shared_noise), daq(daq_in_loop))


def coupler() -> Coupler:
    """The coupler of §7 with the benchmark's rounded angles."""
    c = marths_data.constants()["coupler"]
    return Coupler.from_attachments(c["xv1_m"], (c["yv1_m"], c["yv2_m"]), (c["alpha1_deg"], c["alpha2_deg"]))


def compensators(kind: str) -> list[Compensator]:
    """One compensator per actuator: ``none`` or ``rls`` (initial parameters as shipped, §11.2)."""
    if kind == "none":
        return [NoCompensation(), NoCompensation()]
    if kind == "rls":
        params = marths_data.rls_initial_parameters()
        bw = marths_data.constants()["controller_rlsac"]["butterworth"]
        lam = marths_data.constants()["controller_rlsac"]["forgetting_factor"]
        return [RlsCompensator(params[f"theta0_{i}"], params[f"P0_{i}"], bw["b"], bw["a"], lam) for i in (1, 2)]
    raise ValueError(f"unknown compensator {kind!r}; use one of {', '.join(COMPENSATORS)}")


def feedback_force() -> FeedbackForce:
    return FeedbackForce(feedback_frame(), DT)


def site(compensator: str, backend) -> ExperimentalSite:
    """The experimental site of the benchmark around a control backend (a lab or a remote plant).

    Its interface DOFs are the numerical substructure's (U27, U21, U29), SAP sign.
    """
    return ExperimentalSite(coupler(), compensators(compensator), feedback_force(), backend, FRAME_SIGN)

