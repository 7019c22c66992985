"""Identify the members of the maRTHS SAP2000 frame from its stiffness matrix; check the OpenSees model.

Run ``python -m hybridsim.coordinator.problems.marths.identify``.  It prints

1. the exact identification: ``K_matrix.csv`` is written as a sum over the
   21 members of T_e^T k_e T_e, where T_e maps the joint DOFs to a member's
   basic deformations (elongation, end rotations relative to the chord) on
   the frame's geometry and k_e is its 3 x 3 basic stiffness (axial, and the
   2 x 2 flexural block).  The k_e enter linearly, so one least-squares solve
   gives them; the residual is round-off (about 5e-15), so the geometry, the
   supports and the diaphragm are exactly SAP2000's;
2. what the k_e mean: with E = 29000 ksi and nu = 0.3, each symmetric block
   is a Timoshenko beam, k11 = (4+Phi)EI/(L(1+Phi)), k12 = (2-Phi)EI/(L(1+Phi)),
   whose A, I and As are the AISC tables' W5x16 and S3x5.7; column 2-6's
   block has rank one (a moment release) and its ratio k12/k11 places the
   release 1.125 in below joint 6;
3. why Euler-Bernoulli members cannot do it: the best Euler-Bernoulli fit
   (one EA and EI per member group, least squares on K) and its frequencies;
4. the OpenSees model of ``marths_frame.py`` against the data: its stiffness
   at the 29 SAP2000 DOFs, the first five frequencies (massless DOFs
   condensed) and the condensed 3 x 3 floor stiffness.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import scipy.linalg

from hybridsim.coordinator.problems.marths.data import DATA_DIR, reference_matrices
from hybridsim.modules.opensees.models import marths_frame as frame

PUBLISHED_HZ = (2.2913, 12.7480, 26.2803, 26.5352, 29.9124)  # SPEC 17.1, reference 29-DOF CSV
FLOOR_DOFS = (26, 25, 12)  # 0-based SAP2000 equations of floors 1, 2, 3 (Ux 27, 26, 13)


def joint_equations() -> dict[int, tuple[int, int, int]]:
    """0-based SAP2000 equation (-1: none) of Ux, Uz, Ry for joints 1..16 (``joint_dof.csv``)."""
    with open(DATA_DIR / "joint_dof.csv", newline="") as handle:
        return {int(r["Joint"]): (int(r["Ux"]) - 1, int(r["Uz"]) - 1, int(r["Ry"]) - 1) for r in csv.DictReader(handle)}


def sap_controls() -> list[dict]:
    """Control entries (name, node, dof) of the 29 SAP2000 DOFs in equation order; rotation = -Ry."""
    names: dict[int, dict] = {}
    for joint, (ux, uz, ry) in joint_equations().items():
        if ux >= 0 and joint == frame.FLOOR_RETAINED[(joint - 1) // 4]:
            names[ux] = {"name": f"floor{(joint - 1) // 4}.x", "node": joint, "dof": 1}
        if uz >= 0:
            names[uz] = {"name": f"J{joint}.z", "node": joint, "dof": 2}
        if ry >= 0:
            names[ry] = {"name": f"J{joint}.theta", "node": joint, "dof": 3}
    return [names[i] for i in range(len(names))]


def sap_signs() -> np.ndarray:
    """+1 for translations, -1 for rotations: SAP2000's Ry is minus OpenSees' theta."""
    return np.array([-1.0 if c["dof"] == 3 else 1.0 for c in sap_controls()])


def condensed(stiffness: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Static condensation of ``stiffness`` onto the DOFs ``keep`` (boolean mask)."""
    k, o = np.flatnonzero(keep), np.flatnonzero(~keep)
    return stiffness[np.ix_(k, k)] - stiffness[np.ix_(k, o)] @ np.linalg.solve(stiffness[np.ix_(o, o)],
                                                                                stiffness[np.ix_(o, k)])


def frequencies(stiffness: np.ndarray, mass_diagonal: np.ndarray, count: int = 5) -> np.ndarray:
    """The lowest natural frequencies (Hz) with the massless DOFs statically condensed."""
    carried = mass_diagonal > 0
    eig = scipy.linalg.eigh(condensed(stiffness, carried), np.diag(mass_diagonal[carried]), eigvals_only=True)
    return np.sqrt(eig[:count]) / (2 * np.pi)


def floor_stiffness(stiffness: np.ndarray) -> np.ndarray:
    """The 3 x 3 lateral stiffness of floors 1, 2, 3 with every other DOF condensed (N/m)."""
    keep = np.zeros(stiffness.shape[0], bool)
    keep[list(FLOOR_DOFS)] = True
    order = np.argsort(np.argsort(FLOOR_DOFS))  # condensed() keeps ascending order; put floors 1, 2, 3
    return condensed(stiffness, keep)[np.ix_(order, order)]


def basic_transformation(first: int, second: int) -> tuple[np.ndarray, float]:
    """T (3 x 6) from (ux, uz, theta) at both joints to (elongation, theta_i - chord, theta_j - chord); L."""
    (xi, yi), (xj, yj) = frame.joint_xy(first), frame.joint_xy(second)
    length = float(np.hypot(xj - xi, yj - yi))
    c, s = (xj - xi) / length, (yj - yi) / length
    minus_chord = np.array([-s, c, 0.0, s, -c, 0.0]) / length  # chord rotation (u, z of both ends), negated
    return np.vstack([[-c, -s, 0, c, s, 0], minus_chord + [0, 0, 1, 0, 0, 0], minus_chord + [0, 0, 0, 0, 0, 1]]), length


def member_basis(first: int, second: int, basic: np.ndarray) -> np.ndarray:
    """29 x 29 contribution of one member with basic stiffness ``basic`` (3 x 3), in SAP2000 equations."""
    transform, _ = basic_transformation(first, second)
    local = transform.T @ basic @ transform
    eq = joint_equations()
    index = [e for j in (first, second) for e in eq[j]]
    sign = [1.0, 1.0, -1.0] * 2
    out = np.zeros((29, 29))
    for a in range(6):
        for b in range(6):
            if index[a] >= 0 and index[b] >= 0:
                out[index[a], index[b]] += sign[a] * sign[b] * local[a, b]
    return out


UNIT_BLOCKS = {"ka": np.diag([1.0, 0, 0]), "k11": np.diag([0, 1.0, 0]), "k22": np.diag([0, 0, 1.0]),
               "k12": np.array([[0, 0, 0], [0, 0, 1.0], [0, 1.0, 0]])}


def identify() -> tuple[dict[tuple[int, int, str], float], float]:
    """Basic stiffnesses of every member by least squares on K; the relative Frobenius residual.

    Beam elongation is zero under the diaphragm, so beams have no 'ka'; only the
    sum of k11 of the two fixed-base columns is determined (their base rotation
    is fixed), and the minimum-norm solution splits it equally.
    """
    stiffness, _ = reference_matrices()
    labels, columns = [], []
    for kind, first, second, _ in frame.members():
        for key, block in UNIT_BLOCKS.items():
            if kind == "beam" and key == "ka":
                continue
            labels.append((first, second, key))
            columns.append(member_basis(first, second, block).ravel())
    basis = np.array(columns).T
    values = np.linalg.lstsq(basis, stiffness.ravel(), rcond=None)[0]
    residual = np.linalg.norm(basis @ values - stiffness.ravel()) / np.linalg.norm(stiffness)
    return dict(zip(labels, values)), float(residual)


def timoshenko_section(k11: float, k12: float, length: float) -> tuple[float, float, float]:
    """(Phi, I in^4, As in^2) of a symmetric Timoshenko block with E, G of ``marths_frame``."""
    phi = (2 * k11 - 4 * k12) / (k11 + k12)
    inertia = k11 * length * (1 + phi) / ((4 + phi) * frame.E)
    shear_area = 12 * frame.E * inertia / (frame.G * phi * length**2)
    return phi, inertia / frame.INCH**4, shear_area / frame.INCH**2


def euler_bernoulli_fit() -> np.ndarray:
    """Frequencies (Hz) of the best Euler-Bernoulli fit: one EA and one EI per member group."""
    stiffness, mass = reference_matrices()

    def group(kind: str, first: int) -> str:
        if kind == "beam":
            return "bay beam" if first == 6 else "beam"
        return "bay column" if first in (2, 3) else "column"

    bases: dict[tuple[str, str], np.ndarray] = {}
    for kind, first, second, _ in frame.members():
        _, length = basic_transformation(first, second)
        flexure = np.array([[0, 0, 0], [0, 4.0, 2.0], [0, 2.0, 4.0]]) / length
        key = group(kind, first)
        bases[(key, "EI")] = bases.get((key, "EI"), 0) + member_basis(first, second, flexure)
        if kind == "col":
            bases[(key, "EA")] = bases.get((key, "EA"), 0) + member_basis(first, second, np.diag([1 / length, 0, 0]))
    basis = np.array([b.ravel() for b in bases.values()]).T
    values = np.linalg.lstsq(basis, stiffness.ravel(), rcond=None)[0]
    fitted = (basis @ values).reshape(29, 29)
    residual = np.linalg.norm(fitted - stiffness) / np.linalg.norm(stiffness)
    print(f"   Euler-Bernoulli fit: relative Frobenius residual {residual:.2e}")
    return frequencies(fitted, np.diag(mass))


def opensees_stiffness(part: str = "reference", **parameters) -> np.ndarray:
    """Stiffness of an OpenSees model part at the 29 SAP2000 DOFs (SAP signs; zero where the part has no DOF).

    Measured with the opensees module by central differences of 1e-6 (m, rad).
    """
    from hybridsim.wire.contract import Command, Session
    from hybridsim.modules.opensees import OpenSeesModule

    joints = set(frame.part_joints(part))
    present = [i for i, c in enumerate(sap_controls()) if c["node"] in joints]
    controls = [sap_controls()[i] for i in present]
    module = OpenSeesModule.from_config({"model": "marths_frame.py", "control": controls, "path_independent": True,
                                         "parameters": {"part": part, **parameters}},
                                        base_dir=Path(frame.__file__).parent)
    module.open(Session(dt=1.0, dof_names=module.describe().dof_names))
    signs, h, n = sap_signs()[present], 1e-6, len(controls)
    measured = np.zeros((n, n))
    for j in range(n):
        forces = []
        for step, sign in enumerate((1.0, -1.0)):
            module.propose(2 * j + step, Command(0.0, sign * h * np.eye(n)[j] * signs[j]))
            forces.append(module.execute(2 * j + step).force * signs)
        measured[:, j] = (forces[0] - forces[1]) / (2 * h)
    module.close()
    out = np.zeros((29, 29))
    out[np.ix_(present, present)] = measured
    return out


BAY_DOFS = ("floor1.x", "J6.z", "J6.theta", "J7.z", "J7.theta")


def bay_stiffness() -> np.ndarray:
    """Stiffness of the physical portal (columns 2-6, 3-7, beam 6-7) at ``BAY_DOFS`` from the identification.

    Assembled from the identified basic stiffnesses (independent of OpenSees),
    the base rotations condensed, rotations in OpenSees' sign.
    """
    values, _ = identify()
    portal = np.zeros((29, 29))
    for kind, first, second, _ in frame.members():
        if (kind, first) in frame.PORTAL:
            basic = np.zeros((3, 3))
            for key, block in UNIT_BLOCKS.items():
                basic += values.get((first, second, key), 0.0) * block
            portal += member_basis(first, second, basic)
    names = [c["name"] for c in sap_controls()]
    keep = np.zeros(29, bool)
    keep[[names.index(d) for d in BAY_DOFS] + [names.index("J2.theta"), names.index("J3.theta")]] = True
    sub_names = [n for n, k in zip(names, keep) if k]
    sub = portal[np.ix_(keep, keep)] * np.outer(sap_signs()[keep], sap_signs()[keep])
    kept = np.array([n in BAY_DOFS for n in sub_names])
    stiffness = condensed(sub, kept)
    order = [[n for n in sub_names if n in BAY_DOFS].index(d) for d in BAY_DOFS]
    return stiffness[np.ix_(order, order)]


def bay_module_toml() -> str:
    """The portal as a `linear` module config (TOML), numbers to full precision."""
    rows = ",\n".join("    [" + ", ".join(repr(float(v)) for v in row) + "]" for row in bay_stiffness())
    return ("# The maRTHS physical portal (columns 2-6, 3-7, beam 6-7) as a linear module: its stiffness at the\n"
            "# interface, base rotations condensed, from the identification of K_matrix.csv\n"
            "# (python -m hybridsim.coordinator.problems.marths.identify --bay-toml FILE).  N/m, N, N*m/rad; theta CCW.\n"
            f"dofs = {list(BAY_DOFS)}\n".replace("'", '"')
            + 'kinds = ["translation", "translation", "rotation", "translation", "rotation"]\n'
            + f"stiffness = [\n{rows},\n]\n")


def main() -> None:
    if sys.argv[1:2] == ["--bay-toml"]:
        Path(sys.argv[2]).write_text(bay_module_toml())
        return
    stiffness, mass = reference_matrices()
    masses = np.diag(mass)
    values, residual = identify()
    print(f"1. exact identification: relative Frobenius residual {residual:.1e}")
    for label, (first, second) in (("W5x16 column 5-9", (5, 9)), ("S3x5.7 column 3-7", (3, 7)),
                                   ("beam 5-6", (5, 6)), ("bay beam 6-7", (6, 7))):
        _, length = basic_transformation(first, second)
        phi, inertia, shear_area = timoshenko_section(values[(first, second, "k11")], values[(first, second, "k12")],
                                                      length)
        area = values.get((first, second, "ka"), float("nan")) * length / frame.E / frame.INCH**2
        print(f"2. {label:18s} Phi {phi:.5f}  A {area:.5f} in^2  I {inertia:.7f} in^4  As {shear_area:.7f} in^2")
    k11, k12, k22 = (values[(2, 6, k)] for k in ("k11", "k12", "k22"))
    ratio = k12 / k11
    print(f"2. column 2-6: det/(k11 k22) {(k11 * k22 - k12**2) / (k11 * k22):.1e} (rank one), release "
          f"{(frame.STORY - frame.STORY / (1 + ratio)) / frame.INCH:.6f} in below joint 6")
    print("3. published (Hz)       ", np.array(PUBLISHED_HZ))
    print("   data, condensed (Hz) ", frequencies(stiffness, masses).round(4))
    print("   Euler-Bernoulli (Hz) ", euler_bernoulli_fit().round(4))
    model = opensees_stiffness()
    print(f"4. OpenSees model: relative Frobenius difference to K_matrix.csv "
          f"{np.linalg.norm(model - stiffness) / np.linalg.norm(stiffness):.1e}")
    print("   OpenSees model (Hz)  ", frequencies(model, masses).round(4))
    ratio = floor_stiffness(model) / floor_stiffness(stiffness) - 1
    print(f"   condensed floor stiffness: max relative difference {np.max(np.abs(ratio)):.1e}")


if __name__ == "__main__":
    main()
