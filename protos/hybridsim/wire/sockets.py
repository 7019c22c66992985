"""One system call per message on a stream socket: a receive buffer, and timeouts the kernel keeps.

A Python socket with a timeout is non-blocking underneath and polls before every ``recv`` and ``send``: two
system calls each, and setting the timeout is a third.  A step's message on the step link or a lab protocol
needs only its ``send`` and its ``recv``, so the connections that carry steps are blocking sockets whose
timeouts the kernel keeps (``SO_RCVTIMEO``, ``SO_SNDTIMEO``: socket(7)), and their frames are read from a
buffer that one ``recv_into`` fills with all that has arrived (a whole frame, header and payload, in one call).
"""

from __future__ import annotations

import socket
import struct
import sys

KERNEL_TIMEOUTS = sys.platform != "win32" and hasattr(socket, "SO_RCVTIMEO")
"""whether the platform keeps timeouts as ``struct timeval`` socket options (Windows' take a DWORD of ms)"""
_MIN_S = 1e-6
"""the shortest kernel timeout (s): a zero ``timeval`` means none at all"""


def kernel_timeout(connection: socket.socket, seconds: float) -> None:
    """Make ``connection`` blocking with ``seconds`` (s) as the kernel's timeout of each receive and send; a call
    that times out raises :class:`TimeoutError` through :func:`timed_out`.  Where the platform has no such
    options, Python's own timeout (which polls before each call)."""
    if not KERNEL_TIMEOUTS:
        connection.settimeout(seconds)
        return
    connection.settimeout(None)
    seconds = max(seconds, _MIN_S)
    value = struct.pack("@ll", int(seconds), int(round((seconds % 1) * 1e6)))
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, value)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, value)


def timed_out(exc: BaseException) -> bool:
    """Whether ``exc`` is a receive or send that ran out of time: Python's TimeoutError, or the EAGAIN
    (BlockingIOError) of a blocking socket whose kernel timeout expired (nothing else makes it raise that)."""
    return isinstance(exc, (TimeoutError, BlockingIOError))


class Receiver:
    """What arrives on ``connection``, read into one buffer: :meth:`take` returns the next ``count`` bytes, from
    the buffer when they are there, else after one ``recv_into`` of all that has arrived (bytes beyond a message
    stay for the next).  A message longer than the buffer grows it."""

    def __init__(self, connection: socket.socket, size: int = 65536) -> None:
        self._connection = connection
        self._buffer = bytearray(size)
        self._start = self._end = 0

    def take(self, count: int, at_start: bool = False) -> bytes | None:
        """The next ``count`` bytes; None when the peer closed the connection before a first byte and
        ``at_start`` (a message may begin here); ConnectionError when it closed in the middle."""
        if self._end - self._start < count:
            self._make_room(count)
            view = memoryview(self._buffer)
            while self._end - self._start < count:
                got = self._connection.recv_into(view[self._end:])
                if not got:
                    if at_start and self._end == self._start:
                        return None
                    raise ConnectionError("the connection closed in the middle of a frame")
                self._end += got
        data = bytes(self._buffer[self._start:self._start + count])
        self._start += count
        if self._start == self._end:
            self._start = self._end = 0
        return data

    def _make_room(self, count: int) -> None:
        """Room for ``count`` bytes from the unread ones on: those moved to the front, the buffer grown if short."""
        if self._start + count <= len(self._buffer):
            return
        left = self._buffer[self._start:self._end]
        if count > len(self._buffer):
            self._buffer = bytearray(count)
        self._buffer[:len(left)] = left
        self._start, self._end = 0, len(left)
