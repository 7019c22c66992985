"""One system call per message (hybridsim.wire.sockets): the receive buffer and the kernel's timeouts."""

from __future__ import annotations

import socket
import time

import pytest

from hybridsim.wire.sockets import Receiver, kernel_timeout, timed_out


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


def test_messages_split_or_joined_on_the_wire_come_out_whole_and_in_order(pair) -> None:
    a, b = pair
    receiver = Receiver(b, size=8)  # smaller than two messages: the buffer makes room and grows
    a.sendall(b"abcdefghij" + b"XY")  # two messages in one send
    assert receiver.take(10, at_start=True) == b"abcdefghij"
    a.sendall(b"Z")  # the rest of the second one later
    assert receiver.take(3) == b"XYZ"
    a.sendall(b"0123456789" * 3)
    assert receiver.take(30, at_start=True) == b"0123456789" * 3
    a.shutdown(socket.SHUT_WR)
    assert receiver.take(4, at_start=True) is None  # a clean end between messages


def test_an_end_in_the_middle_of_a_message_is_a_connection_error(pair) -> None:
    a, b = pair
    a.sendall(b"abc")
    a.shutdown(socket.SHUT_WR)
    with pytest.raises(ConnectionError):
        Receiver(b).take(5, at_start=True)


def test_a_receive_past_the_kernel_timeout_is_told_as_timed_out(pair) -> None:
    _, b = pair
    kernel_timeout(b, 0.05)
    start = time.monotonic()
    with pytest.raises(OSError) as raised:
        Receiver(b).take(1, at_start=True)
    assert timed_out(raised.value)
    assert 0.04 <= time.monotonic() - start < 2.0  # socket(7): the timeout, rounded up to the kernel's tick
    assert b.gettimeout() is None  # blocking: no poll before each call
