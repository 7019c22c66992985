"""One C-allocator arena per process: memory one thread frees is reused by the others, so RSS stays flat.

glibc's malloc gives every thread that allocates an arena of its own (up to 8 per core).  A hybridsim
process's threads take turns at large transients: a site's streamed records (every ``RECORDS_EVERY``
= 8192 steps about 0.46 MB for the experimental site: seven records of 8192 doubles) are carried by
whichever of gRPC's event-engine threads reads the stream and by the channel-spin thread gRPC starts
anew for every streaming call.  Each arena grows to the largest transient its thread has carried
and keeps that memory resident once freed (glibc trims a thread arena only past its trim threshold,
which its dynamic mmap threshold raises after the first large free), and next time another thread
carries the transient: the coordinator's RSS rose in steps of 0.3-0.8 MB until every arena had had
its turn.  In one arena the transient reuses the same free
chunks whichever thread carries it.  The experimental site + plant daemon pair over 300,612 steps
(docs/step_loop.md, "One malloc arena per process"): the coordinator grew 3.2 MB from 10 % to 100 %
with glibc's arenas, 0.8-1.6 MB with one (0.54 -> 0.09-0.49 MB per 100,000 steps over the second
half, three runs); the linear and spring daemon rows 0.30 and 0.28 -> 0.01 and 0.02 MB per 100,000
steps (122,998 steps).

The cost is one arena lock for all threads, which costs little here: a step allocates almost nothing
from malloc (Python's small-object allocator and numpy's cache serve it, glibc's per-thread cache
serves small chunks without the lock), the threads that run Python code take turns at the GIL anyway,
and the others allocate once per results block, records collection or checkpoint (no difference in
the coordinator's CPU time per step was measured).  ``MALLOC_ARENA_MAX`` (or
``GLIBC_TUNABLES=glibc.malloc.arena_max=N``) in the environment overrides it.
"""

from __future__ import annotations

import ctypes
import os

M_ARENA_MAX = -8
"""mallopt's parameter number for the most arenas (glibc malloc.h)"""


def one_arena() -> bool:
    """Limit this process to glibc's main arena (``mallopt(M_ARENA_MAX, 1)``); True when it was set.

    Not on another C library, nor when the environment sets the arena count itself (MALLOC_ARENA_MAX,
    GLIBC_TUNABLES' glibc.malloc.arena_max).  A thread keeps the arena of its first allocation: call this
    at the start of the process, before its threads; later, it holds the threads still to come to the
    arenas that exist.  Calling it again changes nothing.
    """
    if "MALLOC_ARENA_MAX" in os.environ or "arena_max" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        os.confstr("CS_GNU_LIBC_VERSION")  # glibc only (musl and macOS have no such name, or no mallopt)
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(M_ARENA_MAX, 1))
    except (ValueError, OSError, AttributeError):
        return False
