"""The tree stays readable: no hand-written source file over 600 lines, no function over 60 lines, and the
experimental site's module under 400 (the limits a maintainer reads the code at; generated code left out)."""

from __future__ import annotations

import ast
import subprocess

from tests.conftest import ROOT

FILE_LINES = 600
FUNCTION_LINES = 60
SITE_MODULE_LINES = 400
SOURCE_FOLDERS = ("api", "benchmarks", "coordinator", "examples", "modules", "protos")


def sources() -> list[str]:
    """The repository's hand-written Python sources (git's list; the protobuf compiler's output left out)."""
    listed = subprocess.run(["git", "ls-files", "--", *(f"{d}/*.py" for d in SOURCE_FOLDERS)], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split()
    return [path for path in listed if not path.endswith(("_pb2.py", "_pb2_grpc.py"))]


def test_no_source_file_is_over_600_lines():
    lengths = {path: len((ROOT / path).read_text().splitlines()) for path in sources()}
    assert len(lengths) > 200
    assert {path: n for path, n in lengths.items() if n > FILE_LINES} == {}
    assert lengths["modules/experimental/module.py"] <= SITE_MODULE_LINES


def test_no_function_is_over_60_lines():
    long = {}
    for path in sources():
        for node in ast.walk(ast.parse((ROOT / path).read_text(), path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > FUNCTION_LINES:
                    long[f"{path}:{node.lineno} {node.name}"] = lines
    assert long == {}
