"""The footing and column of ssi_model.py in PyNite (PyPI ``PyNiteFEA``, a 3-D frame program that is not
OpenSees), behind a UI-SIMCOR interface program: as UI-SIMCOR's interface programs put ABAQUS or Zeus-NL behind
its LabVIEW protocol, this process listens for one LabView1 client (hybridsim's ``simcor`` kind), and for each
transaction enforces the proposed displacements at the control points in PyNite, runs PyNite's linear static
analysis and answers the displacements and PyNite's support reactions.  PyNite is used as published; this file
is only the interface program.  It imports nothing of hybridsim.

    python pynite_frame.py PORT

Control points (axes x, y of the plane): FOOTING-1, FOOTING-2, FOOTING-3 (x, y) and TOP (x).  Every other
in-plane DOF (the footing's rotations, the top's y and rotation) is free; the out-of-plane DOFs are held.
Prints "pynite frame ready" once listening; ends after close-session.
"""

import socket
import sys
from pathlib import Path

from Pynite import FEModel3D

sys.path.insert(0, str(Path(__file__).parent))
import ssi_model  # noqa: E402  (its constants only; it imports nothing)

POINTS = {"FOOTING-1": ("F1", "xy"), "FOOTING-2": ("F2", "xy"), "FOOTING-3": ("F3", "xy"), "TOP": ("T", "x")}
"""control point -> (PyNite node, its controlled axes)"""
COMBO = "step"


def frame() -> FEModel3D:
    """Footing beam F1-F2-F3 and column F2-T in the X-Y plane (m, N, Pa): the values of ssi_model.py."""
    model = FEModel3D()
    y = float(ssi_model.DEPTH)
    for k, x in enumerate(ssi_model.FOOTING):
        model.add_node(f"F{k + 1}", float(x), y, 0.0)
    model.add_node("T", float(ssi_model.FOOTING[1]), y + ssi_model.COLUMN_HEIGHT, 0.0)
    # G and J only act out of the plane, where every node is held
    model.add_material("concrete", ssi_model.CONCRETE_E, 0.4 * ssi_model.CONCRETE_E, 0.2, 0.0)
    model.add_material("steel", ssi_model.STEEL_E, 0.4 * ssi_model.STEEL_E, 0.3, 0.0)
    model.add_section("footing", ssi_model.FOOTING_A, ssi_model.FOOTING_I, ssi_model.FOOTING_I, 0.1)
    model.add_section("column", ssi_model.COLUMN_A, ssi_model.COLUMN_I, ssi_model.COLUMN_I, 1e-5)
    model.add_member("B1", "F1", "F2", "concrete", "footing")
    model.add_member("B2", "F2", "F3", "concrete", "footing")
    model.add_member("C", "F2", "T", "steel", "column")
    for node, axes in POINTS.values():
        model.def_support(node, "x" in axes, "y" in axes, True, True, True, False)
    model.add_load_combo(COMBO, {})
    return model


class Interface:
    """One LabView1 session: propose stores the displacements, execute analyses, get-control-point answers."""

    def __init__(self) -> None:
        self.model = frame()
        self.proposed: dict[str, dict[str, float]] = {}

    def answer(self, tokens: list[str]) -> list[str]:
        """The reply lines to one request line's tokens."""
        what, args = tokens[0], tokens[1:]
        if what in ("open-session", "close-session", "set-parameter"):
            return [f"OK\t0\t{args[0] if args else ''}\t{what} done"]
        if what == "propose":
            self.proposed = self.parse(args[1:])
            return [f"OK\t0\t{args[0]}\tpropose accepted"]
        if what == "execute":
            for name, values in self.proposed.items():
                node = POINTS[name][0]
                for axis, value in values.items():
                    self.model.def_node_disp(node, "D" + axis.upper(), value)
            self.model.analyze_linear(check_stability=False)
            return [f"OK\t0\t{args[0]}\texecute done"]
        if what == "get-control-point":
            return [f"OK\t0\t{args[0]}\t{name}\t" + "\t".join(self.values(name)) for name in args[1:]]
        return [f"NOT OK\t0\t{args[0] if args else ''}\tunknown command {what}"]

    def parse(self, tokens: list[str]) -> dict[str, dict[str, float]]:
        """``NAME axis displacement value ...`` -> {NAME: {axis: value}}."""
        out: dict[str, dict[str, float]] = {}
        at, name = 0, ""
        while at < len(tokens):
            if tokens[at] in POINTS:
                name = tokens[at]
                out[name] = {}
                at += 1
            else:
                out[name][tokens[at]] = float(tokens[at + 2])
                at += 3
        return out

    def values(self, name: str) -> list[str]:
        """axis quantity value triples: the enforced displacements, then PyNite's reactions (N)."""
        node = self.model.nodes[POINTS[name][0]]
        axes = POINTS[name][1]
        shown = [[a, "displacement", f"{self.proposed[name][a]:.16e}"] for a in axes]
        shown += [[a, "force", f"{getattr(node, 'RxnF' + a.upper())[COMBO]:.16e}"] for a in axes]
        return [t for triple in shown for t in triple]


def serve(port: int) -> None:
    with socket.create_server(("127.0.0.1", port)) as server:
        print("pynite frame ready", flush=True)
        connection, _ = server.accept()
    interface = Interface()
    with connection, connection.makefile("rw", newline="\n") as stream:
        for line in stream:
            tokens = line.rstrip("\r\n").split("\t")
            for reply in interface.answer(tokens):
                stream.write(reply + "\n")
            stream.flush()
            if tokens[0] == "close-session":
                break
    print("pynite frame: session closed", file=sys.stderr, flush=True)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
