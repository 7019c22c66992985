"""Regenerate the Python code of the wire contract from protos/hybridsim/v1/*.proto.

    python protos/generate.py            # writes next to the .proto files (commit the result)
    python protos/generate.py --out DIR  # writes under DIR (the drift test compares the two)

Needs grpcio-tools (pinned in the `test` extra so that the output is reproducible).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grpc_tools import protoc

PROTO_ROOT = Path(__file__).resolve().parent
PROTO_FILES = sorted((PROTO_ROOT / "hybridsim" / "v1").glob("*.proto"))


def generate(out: Path) -> None:
    """Write module_pb2.py, module_pb2.pyi and module_pb2_grpc.py for every .proto under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    args = [f"-I{PROTO_ROOT}", f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}"]
    args += [str(p.relative_to(PROTO_ROOT)) for p in PROTO_FILES]
    if protoc.main(["grpc_tools.protoc", *args]) != 0:
        raise SystemExit(f"protoc failed on {', '.join(map(str, PROTO_FILES))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=PROTO_ROOT, help="output root (default: protos/)")
    generate(parser.parse_args().out)


if __name__ == "__main__":
    sys.exit(main())
