"""A lab's controller that logs every command it receives: an ECGenericTCP server process for the gate's tests.

    python logging_controller.py LOG START_M [STIFFNESS_N_PER_M]

Listens on a free loopback port (printed on the first line of stdout), serves one client after another: the
sizes message, then ``3`` (a command: logged as one JSON line ``[strokes...]`` to LOG, and the actuators are
there at once), ``6`` (answered with the strokes and the load cells, STIFFNESS x strokes), ``99`` (the client's
end).  The actuators start at START_M (m, every channel) and stay where the last command put them across
clients, as a real controller's do.
"""

import json
import socket
import struct
import sys

import numpy as np

SIZES = struct.Struct("=11i")


def serve(connection: socket.socket, log, position: np.ndarray, stiffness: float) -> np.ndarray:
    data = _exactly(connection, SIZES.size)
    if data is None:
        return position
    sizes = SIZES.unpack(data)
    ctrl, data_size = sizes[:5], sizes[10]
    n = ctrl[0]
    if position.size != n:
        position = np.full(n, position[0])
    while (raw := _exactly(connection, 8 * data_size)) is not None:
        message = np.frombuffer(raw, dtype="=f8")
        action = int(message[0])
        if action == 3:
            position = message[1:1 + n].copy()
            log.write(json.dumps(position.tolist()) + "\n")
            log.flush()
        elif action == 6:
            reply = np.zeros(data_size)
            reply[:n], reply[n:2 * n] = position, stiffness * position
            connection.sendall(reply.astype("=f8").tobytes())
        elif action == 99:
            break
    return position


def _exactly(connection: socket.socket, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def main() -> None:
    log_path, start = sys.argv[1], float(sys.argv[2])
    stiffness = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0e5
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    position = np.array([start])
    with open(log_path, "a") as log:
        while True:
            connection, _ = listener.accept()
            with connection:
                position = serve(connection, log, position, stiffness)


if __name__ == "__main__":
    main()
