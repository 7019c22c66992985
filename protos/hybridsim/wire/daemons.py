"""Site daemons the coordinator starts itself (`address = "local"` in an experiment).

:class:`LocalDaemon` runs `hybridsim site KIND` as a child process on a free
loopback port, learns the port from the file the daemon writes, waits until
grpc.health.v1 reports SERVING, and stops the daemon with SIGTERM at the end
(at the latest when the interpreter exits; the daemon also exits by itself
if the coordinator dies).  Its folder (config copy, token, log) goes with it, but for the log of a daemon that
failed, moved to a folder of its own that stays until the user removes it (the next hybridsim process to start
sweeps the folders of a coordinator killed with kill -9; :mod:`hybridsim.wire.daemons_folders`).
"""

from __future__ import annotations

import atexit
import json
import secrets
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from grpc_health.v1 import health_pb2, health_pb2_grpc

from hybridsim.wire.credentials import ClientCredentials
from hybridsim.wire import codec
from hybridsim.wire.contract import ModuleError
from hybridsim.wire.daemons_folders import keep_log, site_folder, sweep_stale

log = logging.getLogger("hybridsim.daemons")

_POLL_S = 0.02


def _jsonable(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not a config value")


class LocalDaemon:
    """A `hybridsim site` daemon on 127.0.0.1, started and stopped by the coordinator.

    LocalDaemon(kind, config, base_dir=None, name="", start_timeout_s=60.0, site_args=(), credentials=None,
                private=False)

    kind, config     the module kind and its config table (as in an experiment's [[modules]])
    base_dir         folder that relative paths in ``config`` start from (default: the current folder)
    name             the site's name in its log and messages (default: ``kind``)
    start_timeout_s  how long ``start()`` waits for SERVING (s)
    site_args        further `hybridsim site` options, e.g. ``("--token-file", PATH)`` or the TLS files
    credentials      how the health check reaches a daemon that ``site_args`` secure
                     (:class:`hybridsim.wire.credentials.ClientCredentials`)
    private          give the daemon an access token of its own, made for this run (readable by this
                     user only), so that other users of the machine cannot reach it on loopback; the
                     client then connects with :attr:`credentials`

    ``start()`` returns the address ("127.0.0.1:PORT"), ``stop()`` the exit
    code; as a context manager it does both.  ``launch()`` only starts the
    process: launch several daemons, then ``start()`` each, to boot them in
    parallel (and ``terminate()`` several, then ``stop()`` each, to stop them
    in parallel).  Errors (a bad config, a daemon
    that dies while starting) raise ModuleError with the end of its log.
    """

    def __init__(self, kind: str, config: Mapping[str, Any], base_dir: Path | None = None, name: str = "",
                 start_timeout_s: float = 60.0, site_args: Sequence[str] = (),
                 credentials: ClientCredentials | None = None, private: bool = False) -> None:
        if private and (site_args or credentials):
            raise ModuleError("a private local daemon makes its own token: give no site_args or credentials")
        self.kind = kind
        self.site_args = tuple(str(a) for a in site_args)
        self._credentials = credentials or ClientCredentials(token=secrets.token_urlsafe(32) if private else None)
        self.name = name or kind
        self.start_timeout_s = start_timeout_s
        self._config = dict(config)
        self._base_dir = Path(base_dir or Path.cwd()).resolve()
        self._process: subprocess.Popen[bytes] | None = None
        self._folder: Path | None = None
        self._launched = 0.0
        self._terminated = False
        self.address = ""

    @property
    def credentials(self) -> ClientCredentials:
        """What a client of this daemon connects with (the per-run token of a private daemon)."""
        return self._credentials

    @property
    def pid(self) -> int:
        if self._process is None:
            raise ModuleError(f"site {self.name}: the daemon is not running")
        return self._process.pid

    @property
    def log_path(self) -> Path | None:
        """The daemon's log (stdout and stderr): while it runs, and after it failed (:func:`keep_log`)."""
        return None if self._folder is None else self._folder / "site.log"

    @property
    def _port_path(self) -> Path:
        assert self._folder is not None
        return self._folder / "port"

    def launch(self) -> None:
        """Start the daemon's process and return at once (``start()`` then waits for it to serve).

        Launch several daemons before starting any to let them boot in parallel.
        """
        if self._process is not None:
            return
        sweep_stale()
        self._folder = site_folder(self.name)
        config_path = self._folder / "config.json"
        site_args = self.site_args
        if self._credentials.token is not None and "--token-file" not in site_args:
            token_path = self._folder / "token"  # the folder is private to this user (mkdtemp: mode 0700)
            token_path.write_text(self._credentials.token)
            token_path.chmod(0o600)
            site_args = (*site_args, "--token-file", str(token_path))
        try:
            config_path.write_text(json.dumps(self._config, default=_jsonable))
        except TypeError as exc:
            raise ModuleError(f"site {self.name}: the config cannot be passed to a daemon: {exc}") from None
        command = [sys.executable, "-P", "-m", "hybridsim", "site", self.kind, "--config", str(config_path),
                   "--name", self.name, "--base-dir", str(self._base_dir), "--listen", "127.0.0.1:0",
                   "--port-file", str(self._port_path), "--parent-pid", str(os.getpid()), *site_args]
        with open(self.log_path, "wb") as log_file:  # type: ignore[arg-type]
            # a session of its own: Ctrl-C at the terminal reaches the coordinator only, which then
            # collects the sites' records, closes their sessions and stops them (--parent-pid ends an orphan)
            self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log_file,
                                             stderr=subprocess.STDOUT, start_new_session=True)
        self._launched = time.monotonic()
        atexit.register(self.stop)

    def start(self) -> str:
        """Launch the daemon (unless launched) and wait until it serves; return its address."""
        if self.address:
            return self.address
        self.launch()
        try:
            deadline = self._launched + self.start_timeout_s
            port = self._wait_for_port(deadline)
            self.address = f"127.0.0.1:{port}"
            self._wait_for_serving(deadline)
        except BaseException:
            self.stop()
            raise
        return self.address

    def terminate(self) -> None:
        """Send SIGTERM and return at once (``stop()`` then waits for the exit): stops several daemons at once."""
        if self._process is not None and self._process.poll() is None and not self._terminated:
            self._process.send_signal(signal.SIGTERM)
            self._terminated = True

    def stop(self, timeout_s: float = 5.0) -> int | None:
        """SIGTERM, wait up to ``timeout_s`` (then SIGKILL); return the exit code (None if never started)."""
        atexit.unregister(self.stop)
        process, self._process = self._process, None
        self.address = ""
        if process is None:
            return None
        terminated, self._terminated = self._terminated, False
        if process.poll() is None:
            if not terminated:  # one SIGTERM: a second one while the daemon handles the first can hang it
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                log.warning("site %s: the daemon did not stop within %g s after SIGTERM; killing it", self.name, timeout_s)
                process.kill()
                process.wait()
        if process.returncode == 0 and self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
        elif self._folder is not None:
            self._folder = keep_log(self._folder, self.name)  # the log alone stays, where no sweep removes it
            log.warning("site %s: the daemon exited with code %s; its log: %s", self.name, process.returncode,
                        self.log_path)
        return process.returncode

    def __enter__(self) -> "LocalDaemon":
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- starting ----------------------------------------------------------
    def _wait_for_port(self, deadline: float) -> int:
        while not self._port_path.exists():
            self._check_alive()
            if time.monotonic() > deadline:
                raise self._failure(f"did not start serving within {self.start_timeout_s:g} s")
            time.sleep(_POLL_S)
        return int(self._port_path.read_text())

    def _wait_for_serving(self, deadline: float) -> None:
        with self._credentials.channel(self.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            while True:
                self._check_alive()
                try:
                    reply = health.Check(health_pb2.HealthCheckRequest(service=codec.SERVICE_NAME),
                                         timeout=max(deadline - time.monotonic(), _POLL_S))
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError as exc:
                    if exc.code() is not grpc.StatusCode.UNAVAILABLE:
                        raise self._failure(f"health check failed: {exc.code().name}: {exc.details()}") from None
                if time.monotonic() > deadline:
                    raise self._failure(f"was not SERVING within {self.start_timeout_s:g} s")
                time.sleep(_POLL_S)

    def _check_alive(self) -> None:
        assert self._process is not None
        if self._process.poll() is not None:
            raise self._failure(f"exited with code {self._process.returncode} while starting")

    def _failure(self, what: str) -> ModuleError:
        tail = ""
        if self.log_path is not None and self.log_path.exists():
            lines = self.log_path.read_text(errors="replace").strip().splitlines()[-5:]
            tail = ("; its log ends: " + " | ".join(lines)) if lines else ""
        return ModuleError(f"site {self.name}: the {self.kind} daemon {what}{tail}")
