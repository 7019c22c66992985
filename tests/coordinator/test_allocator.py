"""One C-allocator arena per hybridsim process (hybridsim.coordinator.allocator), in fresh processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHILD = r"""
import ctypes, re, sys, threading
from hybridsim.coordinator.allocator import one_arena

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.open_memstream.restype = ctypes.c_void_p
libc.open_memstream.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
set_it = one_arena() if sys.argv[1] == "one" else None
started = threading.Barrier(4)

def transient():  # what a gRPC thread does with a records stream: 1 MB in 64 KiB pieces, then freed
    started.wait()  # all four alive at once: none can take an arena another left
    blocks = [libc.malloc(65536) for _ in range(16)]
    for block in blocks:
        libc.free(block)

threads = [threading.Thread(target=transient) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
text, size = ctypes.c_void_p(), ctypes.c_size_t()
stream = libc.open_memstream(ctypes.byref(text), ctypes.byref(size))
libc.malloc_info(0, stream)
libc.fclose(stream)
print(set_it, len(re.findall(r'<heap nr="', ctypes.string_at(text, size.value).decode())))
"""

glibc = pytest.mark.skipif(not hasattr(os, "confstr") or "CS_GNU_LIBC_VERSION" not in os.confstr_names,
                           reason="glibc's malloc only")


def child(mode: str, **env: str) -> list[str]:
    """(what one_arena returned, the arenas glibc reports) in a fresh process whose four threads allocated."""
    clean = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX" and not k.startswith("GLIBC_TUNABLES")}
    out = subprocess.run([sys.executable, "-P", "-c", CHILD, mode], capture_output=True, text=True, check=True,
                         env={**clean, **env}, timeout=60)
    return out.stdout.split()


@glibc
def test_threads_share_the_main_arena_after_one_arena() -> None:
    assert child("one") == ["True", "1"]
    _, arenas = child("default")  # the control: without it, glibc gives threads arenas of their own
    assert int(arenas) > 1


@glibc
def test_an_arena_count_in_the_environment_is_kept() -> None:
    assert child("one", MALLOC_ARENA_MAX="3") == ["False", "3"]  # four threads in the three arenas glibc was told
    assert child("one", GLIBC_TUNABLES="glibc.malloc.arena_max=2")[0] == "False"
