"""The process that holds a yielding dynamic OpenSees module's model: settled steps here, trials in a fork of it.

A path-dependent model's state is more than its nodes' (its materials' history) and openseespy commits every
transient step with no way back, while the coupling takes every trial step again once the next command tells
the true interface motion (docs/dynamic_modules.md, equation (3)).  So a settled step (``keep``) runs in this
process and a trial in a fork of it, which answers and exits: the model is at the settled state whatever the
trials did.  ``python -m hybridsim.modules.opensees.transient_worker`` reads requests on stdin, ``("build",
model file, parameters, Stepper arguments)`` and ``("run", base, path, h, loaded, keep)``, and answers
``(error, result)`` on its stdout (OpenSees' own output goes to stderr); it ends at the end of its stdin (the
module's process is gone).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.opensees.forked import read_message, write_message
from hybridsim.wire.contract import ModuleError


def _run(stepper: Any, request: tuple, answers: int) -> float:
    """A settled step here (the model's time after it), or a trial in a fork that answers and exits."""
    base, path, h, loaded, keep = request[1:]
    if keep:
        write_message(answers, (None, stepper.run(base, path, h, loaded)))
        return base[0] + h * len(path)
    pid = os.fork()
    if pid == 0:
        try:
            write_message(answers, (None, stepper.run(base, path, h, loaded)))
        except ModuleError as exc:
            write_message(answers, (str(exc), None))
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        write_message(answers, (f"opensees module: the trial step's process ended with status {status}", None))
    return base[0]


def serve(requests: int, answers: int) -> None:
    """Answer requests until the end of ``requests``."""
    from hybridsim.modules.opensees import domain
    from hybridsim.modules.opensees.transient import Stepper

    stepper, time = None, 0.0
    while (request := read_message(requests)) is not None:
        try:
            if request[0] == "build":
                model = Path(request[1])
                domain.build_model(domain.load_builder(model), request[2], model)
                stepper, time = Stepper(*request[3]), 0.0
                stepper.open()
                write_message(answers, (None, None))
            elif stepper is None or abs(request[1][0] - time) > 1e-9 * max(request[3], 1e-300):
                write_message(answers, (f"opensees module: a yielding dynamic module steps from its settled state "
                                        f"(t = {time:.9g} s), not from t = {request[1][0]:.9g} s: give it one "
                                        "command a step (alpha-OS)", None))
            else:
                time = _run(stepper, request, answers)
        except ModuleError as exc:
            write_message(answers, (str(exc), None))


class WorkerStepper:
    """The module's side: a :class:`hybridsim.modules.opensees.transient.Stepper` in a worker process built from
    the ``model`` file with ``parameters``; it answers the interface's resisting force (``forces``)."""

    forces = True

    def __init__(self, model: Path, parameters: dict[str, Any], arguments: tuple) -> None:
        self._build = ("build", str(model), dict(parameters), arguments)
        self._process: subprocess.Popen | None = None

    def open(self) -> None:
        """A fresh worker with the model built at rest (a session's start)."""
        self.close()
        self._process = subprocess.Popen([sys.executable, "-P", "-m", __name__], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE)
        self._call(self._build)

    def run(self, base: tuple, path: np.ndarray, h: float, loaded: bool, keep: bool) -> tuple[np.ndarray, ...]:
        """:meth:`Stepper.run` in the worker: settled (``keep``) or a trial."""
        return self._call(("run", base, path, h, loaded, keep))

    def _call(self, request: tuple) -> Any:
        assert self._process is not None and self._process.stdin is not None and self._process.stdout is not None
        try:
            write_message(self._process.stdin.fileno(), request)
            answer = read_message(self._process.stdout.fileno())
        except OSError:
            answer = None
        if answer is None:
            raise ModuleError("opensees module: the process of the yielding dynamic model ended; see its stderr")
        if answer[0]:
            raise ModuleError(answer[0])
        return answer[1]

    def close(self) -> None:
        """End the worker (its stdin closed: it returns)."""
        if self._process is not None:
            for pipe in (self._process.stdin, self._process.stdout):
                if pipe is not None:
                    pipe.close()
            self._process.wait()
            self._process = None

    def __del__(self) -> None:
        self.close()


def main() -> int:
    """The worker: answers on a private copy of stdout, OpenSees' prints go to stderr."""
    answers = os.dup(1)
    os.dup2(2, 1)
    serve(0, answers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
