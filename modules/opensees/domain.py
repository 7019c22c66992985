"""The process's one openseespy domain: who holds it, and building a user's model into it.

openseespy keeps a single global model per Python process.  Two OpenSees
substructures therefore cannot share a process: each is served by its own
daemon (``hybridsim site opensees``).  :func:`claim` makes a second holder in
the same process fail with that advice instead of silently wiping the first
holder's model.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import sys
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from hybridsim.modules.opensees.lazy import ops, opensees
from hybridsim.wire.contract import ModuleError

ModelBuilder = Callable[..., None]

_holder: weakref.ref[object] | None = None
_holder_label = ""


def claim(owner: object, label: str) -> None:
    """Make ``owner`` the holder of this process's OpenSees domain (idempotent for the holder)."""
    global _holder, _holder_label
    current = _holder() if _holder is not None else None
    if current is not None and current is not owner:
        raise ModuleError(
            f"{label}: this process already holds the OpenSees model of {_holder_label}; openseespy has one "
            "model per process, so serve each OpenSees substructure as its own daemon "
            "(`hybridsim site opensees --config ...`) and close the first holder before reusing the process")
    _holder = weakref.ref(owner)
    _holder_label = label


def release(owner: object) -> None:
    """Wipe the domain and let another holder claim it (no-op if ``owner`` does not hold it)."""
    global _holder
    if _holder is not None and _holder() is owner:
        ops.wipe()
        _holder = None


class _Holder:
    """A token that holds the domain for a ``with`` block (weak-referenceable)."""


@contextlib.contextmanager
def held(label: str) -> Iterator[None]:
    """Hold the domain for a block (an analysis outside any module); wipe and release it after."""
    token = _Holder()
    claim(token, label)
    try:
        yield
    finally:
        release(token)


def load_builder(path: Path) -> ModelBuilder:
    """Import a model file and return its ``build(ops, **parameters)`` function."""
    if not path.is_file():
        raise ModuleError(f"OpenSees model file {path} does not exist (the 'model' key is relative to the config file)")
    name = f"hybridsim_opensees_model_{path.stem}_{abs(hash(path.resolve()))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ModuleError(f"OpenSees model file {path} cannot be imported as Python")
    namespace = importlib.util.module_from_spec(spec)
    sys.modules[name] = namespace  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(namespace)
    except Exception as exc:  # the user's file: report any error with its origin
        del sys.modules[name]
        raise ModuleError(f"OpenSees model file {path} failed to import: {type(exc).__name__}: {exc}") from exc
    build = getattr(namespace, "build", None)
    if not callable(build):
        raise ModuleError(f"OpenSees model file {path} must define a function build(ops, **parameters)")
    return build


def build_model(build: ModelBuilder, parameters: Mapping[str, Any], origin: Path) -> None:
    """Wipe the domain and run the user's ``build(ops, **parameters)`` in it; drop any analysis it left."""
    accepted = inspect.signature(build).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    unknown = sorted(k for k in parameters if k not in accepted and not takes_any)
    if unknown:
        raise ModuleError(f"OpenSees model file {origin}: build() has no parameter(s) {unknown}; "
                          f"it accepts {[k for k in accepted if k != 'ops']}")
    ops.wipe()
    try:
        build(opensees(), **parameters)  # the real module: a user's file may use any of it
    except Exception as exc:  # the user's file: report any error with its origin
        raise ModuleError(f"OpenSees model file {origin}: build() failed: {type(exc).__name__}: {exc}") from exc
    ops.wipeAnalysis()
    if not ops.getNodeTags():
        raise ModuleError(f"OpenSees model file {origin}: build() created no nodes")
