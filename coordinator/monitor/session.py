"""`hybridsim run ... --monitor HOST:PORT`: serve the Monitor service for the length of one run."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.experiment import Experiment
from hybridsim.coordinator.monitor.publisher import Publisher
from hybridsim.coordinator.monitor.service import MonitorServer
from hybridsim.wire.security import is_loopback

DEFAULT_WEB = "127.0.0.1:8765"
"""where `hybridsim monitor` serves its page unless told otherwise"""
TOKEN_ENV = "HYBRIDSIM_MONITOR_TOKEN"
"""the environment variable that may carry the monitor's access token"""
MIN_TOKEN_CHARS = 12


def add_monitor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--monitor", metavar="HOST:PORT",
                        help="serve the live monitor (hybridsim.v1.Monitor) there; PORT alone binds loopback, "
                             "port 0 picks a free one")
    parser.add_argument("--monitor-token-file", type=Path, metavar="FILE",
                        help="read the access token Hold/Resume/Abort need from FILE (only you may read it: mode "
                             f"0600); or set ${TOKEN_ENV}; default: a fresh random token, printed")
    parser.add_argument("--monitor-token", metavar="TOKEN",
                        help="the access token on the command line: every local user sees it in ps (warned); "
                             "prefer --monitor-token-file")


def monitor_token(args: argparse.Namespace, stream: TextIO = sys.stderr) -> str | None:
    """The access token the options give: --monitor-token-file, else $HYBRIDSIM_MONITOR_TOKEN, else
    --monitor-token (with a warning: a command line is public on the machine); None: make one."""
    if args.monitor_token_file is not None:
        if args.monitor_token is not None:
            raise UsageError("give --monitor-token-file or --monitor-token, not both")
        return _token_file(args.monitor_token_file)
    if os.environ.get(TOKEN_ENV):
        return _checked(os.environ[TOKEN_ENV], f"${TOKEN_ENV}")
    if args.monitor_token is not None:
        print(f"monitor: warning: --monitor-token is visible to every user of this machine (ps); use "
              f"--monitor-token-file FILE (mode 0600) or ${TOKEN_ENV}", file=stream)
        return _checked(args.monitor_token, "--monitor-token")
    return None


def _token_file(path: Path) -> str:
    try:
        mode = path.stat().st_mode
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise UsageError(f"--monitor-token-file: cannot read {path}: {exc.strerror}") from None
    if stat.S_IMODE(mode) & 0o077:
        raise UsageError(f"--monitor-token-file: {path} may be read by other users (mode {stat.S_IMODE(mode):04o}); "
                         f"chmod 600 {path}")
    lines = text.strip().splitlines()
    return _checked(lines[0].strip() if lines else "", f"--monitor-token-file {path}")


def _checked(token: str, where: str) -> str:
    if len(token) < MIN_TOKEN_CHARS or not token.isascii() or not token.isprintable() or " " in token:
        raise UsageError(f"{where}: the monitor token must be at least {MIN_TOKEN_CHARS} printable ASCII characters "
                         "without spaces")
    return token


@contextlib.contextmanager
def monitoring(experiment: Experiment, address: str | None, token: str | None = None, *,
               stream: TextIO = sys.stderr, **publisher_options: Any) -> Iterator[dict[str, Any]]:
    """The keyword arguments of ``run_experiment`` (control and listeners) that put the run on a monitor
    at ``address`` (nothing when it is None); the final state goes to the observers however the run ends."""
    if address is None:
        yield {}
        return
    control = RunControl()
    given = token is not None
    token = token or secrets.token_urlsafe(12)
    publisher = Publisher(experiment, control, **publisher_options)
    server = MonitorServer(address, publisher, control, token)
    bound = server.start()
    publisher.start()
    shown = "the one given" if given else token
    print(f"monitor: serving hybridsim.v1.Monitor on {bound}; access token {shown}", file=stream)
    if not is_loopback(bound):
        print(f"monitor: {bound} is not a loopback address: anyone who reaches it can watch the run", file=stream)
    print(f"monitor: watch in a browser: hybridsim monitor {bound}  then open http://{DEFAULT_WEB}/"
          f"#token={'TOKEN' if given else token}", file=stream, flush=True)
    state = "stopped: interrupted"
    try:
        yield {"control": control, "listeners": [publisher]}
        state = "completed"
    except RunStopped as exc:
        state = f"stopped: {exc}"
        raise
    except BaseException as exc:
        if not isinstance(exc, KeyboardInterrupt):
            state = f"stopped: {type(exc).__name__}: {exc}"
        raise
    finally:
        publisher.close(state)
        server.stop()
