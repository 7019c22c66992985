"""The committed generated code is what `python protos/generate.py` makes from the .proto today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import hybridsim.v1.module_pb2 as module_pb2

PROTOS = Path(__file__).resolve().parents[2] / "protos"
GENERATED = tuple(f"{proto.stem}{suffix}" for proto in sorted((PROTOS / "hybridsim" / "v1").glob("*.proto"))
                  for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py"))


def test_committed_code_matches_a_fresh_generation(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(PROTOS / "generate.py"), "--out", str(tmp_path)], check=True)
    for name in GENERATED:
        fresh = (tmp_path / "hybridsim" / "v1" / name).read_text()
        committed = (PROTOS / "hybridsim" / "v1" / name).read_text()
        assert committed == fresh, f"protos/hybridsim/v1/{name} drifted from its .proto: run python protos/generate.py"


def test_the_service_has_the_module_interface_the_lockstep_stream_and_the_records_stream() -> None:
    service = module_pb2.DESCRIPTOR.services_by_name["Module"]
    assert service.full_name == "hybridsim.v1.Module"
    methods = {m.name: (m.client_streaming, m.server_streaming) for m in service.methods}
    unary = ("Describe", "Open", "Propose", "Execute", "Commit", "Checkpoint", "Restore", "Close", "Step", "Echo")
    assert methods == {**{name: (False, False) for name in unary}, "Steps": (True, True), "Records": (False, True)}


def test_vectors_travel_packed() -> None:
    command = module_pb2.Command(displacement=[1.0] * 100)
    # packed: one tag, one length varint, 800 bytes of doubles (unpacked would be 900)
    assert command.ByteSize() == 1 + 2 + 800
