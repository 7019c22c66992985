"""`hybridsim site KIND --config SITE.toml --listen HOST:PORT`: serve one module over gRPC.

The config file is the module's table (what `config = {...}` holds in an
experiment's [[modules]]), as TOML or JSON.  The site serves the
hybridsim.v1 Module service, grpc.health.v1 and reflection, logs one line
per session and a summary when it closes, and stops cleanly on SIGTERM or
SIGINT (calls in flight finish, the open session is closed).

Who may command it: clients with a certificate of the CA (--tls-cert
--tls-key --tls-ca, mutual TLS), clients with the access token
(--token-file), or, with neither, only processes on this machine: a site
without TLS or a token listens on loopback only, unless --insecure.

Beside gRPC the site serves its step link (fixed binary step frames) on a
Unix socket and on --link-listen (TCP, loopback unless --insecure; none:
no link); a site with mutual TLS serves none.

The labs' protocols, one option per line of hybridsim.wire.protocols.PROTOCOLS
(--openfresco: OpenSees/OpenFresco's SimApp, for genericClient elements and
ShadowExpSites; --generic-tcp: a lab's ECGenericTCP control; --simcor:
UI-SIMCOR's LabView1/LabView2), serve the same module through the same
servicer as gRPC; they have no authentication (loopback unless --insecure),
and each is configured by its table of the config (docs/interop.md).
"""

from __future__ import annotations

import argparse
import logging
import os
import select
import signal
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.ports import BUSY, in_use
from hybridsim.coordinator.config_text import parse_config_text, read_config_text
from hybridsim.wire import codec
from hybridsim.wire.contract import ModuleError
from hybridsim.modules.config_schema import ConfigError
from hybridsim.modules.registry import KINDS, build_module, module_schema
from hybridsim.wire.protocols import PROTOCOLS, refusal_of_address, serve_protocols

if TYPE_CHECKING:
    from hybridsim.wire.security import SiteAccess
    from hybridsim.wire.server import SiteServer

log = logging.getLogger("hybridsim.site")

_PARENT_CHECK_S = 0.5
"""how often a site started with --parent-pid checks that its parent still runs (s)"""


def register(sub: Any) -> None:
    parser = sub.add_parser("site", help="serve one module to coordinators over gRPC", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", metavar="KIND", help=f"module kind ({', '.join(sorted(KINDS))})")
    parser.add_argument("--config", type=Path, metavar="SITE.toml",
                        help="the module's configuration table (.toml or .json; required "
                        "unless --describe-config)")
    parser.add_argument("--describe-config", action="store_true",
                        help="print every key KIND's configuration takes (type, unit, range, default) and exit")
    parser.add_argument("--listen", default="127.0.0.1:50051", metavar="HOST:PORT",
                        help="HOST:PORT to serve on; port 0 picks a free one (default: %(default)s)")
    parser.add_argument("--link-listen", default="127.0.0.1:0", metavar="HOST:PORT",
                        help="serve the step link (docs/wire_speed.md) on this TCP address too, beside a Unix socket; "
                             "port 0 picks a free one; 'none': serve no link (default: %(default)s)")
    for option, protocol in PROTOCOLS.items():
        parser.add_argument(f"--{option}", metavar="HOST:PORT",
                            help=f"also serve {protocol.help} here (no authentication: loopback unless --insecure; the "
                                 f"config's [{protocol.table}] table configures it; docs/interop.md)")
    parser.add_argument("--move-to", metavar="STROKES",
                        help="(experimental) instead of serving, bring the actuators from where they are to STROKES "
                             "(m: one for all, or one per actuator, comma-separated) at the config's gate.move_speed, "
                             "every command through the site's gate; then exit")
    parser.add_argument("--hold-file", type=Path, metavar="FILE",
                        help="keep the site's hold (a measured overload) in FILE, so that a restarted site starts "
                             "held until hybridsim site-control --clear (which removes it)")
    parser.add_argument("--name", help="the site's name in logs and messages (default: the config file's stem)")
    parser.add_argument("--base-dir", type=Path, metavar="DIR",
                        help="folder that relative paths in the config start from (default: the config file's folder)")
    parser.add_argument("--port-file", type=Path, metavar="FILE",
                        help="once serving, write the bound port to this file")
    parser.add_argument("--max-message-mib", type=float, metavar="MIB",
                        default=codec.DEFAULT_MAX_MESSAGE_BYTES / 2**20,
                        help="refuse larger messages (default: %(default)g MiB)")
    parser.add_argument("--parent-pid", type=int, metavar="PID",
                        help="stop when process PARENT_PID is no longer this site's parent, i.e. when the "
                             "coordinator that started the site exits")
    access = parser.add_argument_group("access (docs/security.md)")
    access.add_argument("--tls-cert", type=Path, metavar="SITE.crt", help="serve TLS with this certificate (PEM)")
    access.add_argument("--tls-key", type=Path, metavar="SITE.key", help="the certificate's private key (PEM)")
    access.add_argument("--tls-ca", type=Path, metavar="CA.crt",
                        help="accept only clients with a certificate this CA signed (mutual TLS)")
    access.add_argument("--token-file", type=Path, metavar="FILE",
                        help="accept only calls that carry the access token in FILE (plaintext: on loopback only)")
    access.add_argument("--insecure", action="store_true",
                        help="serve without TLS or a token on a non-loopback address (a trusted private network)")
    access.add_argument("--health-listen", metavar="HOST:PORT",
                        help="also serve grpc.health.v1 alone, in plaintext, on this loopback address (for a probe "
                             "without credentials, e.g. a container healthcheck)")
    parser.set_defaults(func=main)


def site_access(args: argparse.Namespace) -> SiteAccess:
    """The access of the site's options; a bad combination or file raises UsageError naming the option."""
    from hybridsim.wire.security import CredentialError, SiteAccess, SiteTLS, read_token

    if (args.tls_cert is None) != (args.tls_key is None):
        raise UsageError("--tls-cert and --tls-key go together: give both (hybridsim certs writes SITE.crt and SITE.key)")
    if args.tls_ca is not None and args.tls_cert is None:
        raise UsageError("--tls-ca needs --tls-cert and --tls-key: the site's own certificate and key")
    try:
        tls = None if args.tls_cert is None else SiteTLS.from_files(args.tls_cert, args.tls_key, args.tls_ca)
        token = None if args.token_file is None else read_token(args.token_file, "--token-file")
    except CredentialError as exc:
        raise UsageError(str(exc)) from None
    return SiteAccess(tls, token, args.insecure)


def load_config(path: Path) -> dict[str, Any]:
    """The module's config table from a .toml or .json file."""
    if path.suffix not in (".json", ".toml"):
        raise UsageError(f"--config: {path} must be a .toml or .json file")
    try:
        text = read_config_text(path)
    except OSError as exc:
        raise UsageError(f"--config: cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(f"--config: {exc}") from None
    try:
        table = parse_config_text(text, path.suffix[1:].upper())
    except ValueError as exc:
        raise UsageError(f"--config: {path} is not valid {path.suffix[1:].upper()}: {exc}") from None
    if not isinstance(table, dict):
        raise UsageError(f"--config: {path} must hold a table of the module's settings")
    return table


def _listen_address(text: str, option: str = "--listen", alternative: str = "") -> str:
    """``text`` when it is HOST:PORT; else UsageError naming ``option`` (and the ``alternative`` it also takes)."""
    host, colon, port = text.rpartition(":")
    if not (colon and host and port.isdigit() and int(port) < 65536):
        raise UsageError(f"{option}: give HOST:PORT (e.g. 127.0.0.1:50051 or 0.0.0.0:0){alternative}, not {text!r}")
    return text


def _article(word: str) -> str:
    """'an' before a vowel ("an opensees module", "an experimental module"), else 'a'."""
    return "an" if word[:1] in "aeiou" else "a"


def _write_port(path: Path, port: int) -> None:
    """Write the port so that a reader never sees a partial file."""
    partial_path = path.with_name(path.name + ".partial")
    partial_path.write_text(f"{port}\n")
    os.replace(partial_path, path)


def _protocol_addresses(args: argparse.Namespace) -> dict[str, str]:
    """The labs' protocols asked for (option -> HOST:PORT), one option per line of ``PROTOCOLS``; UsageError for
    an address off loopback without --insecure, or beside a site's credential (these protocols carry none)."""
    protocols = {option: _listen_address(value, f"--{option}") for option in PROTOCOLS
                 if (value := getattr(args, option.replace("-", "_"))) is not None}
    for option, address in protocols.items():
        refusal = refusal_of_address(f"--{option}", address, args.insecure)
        if refusal:
            raise UsageError(refusal)
    credential = "--token-file" if args.token_file else "--tls-ca" if args.tls_ca else None
    if protocols and credential:
        option = next(iter(protocols))
        raise UsageError(f"--{option} with {credential}: the site asks its gRPC clients for a credential and this "
                         "protocol carries none (no lab protocol does: SimApp, ECGenericTCP, UI-SIMCOR; "
                         "docs/security.md), so any client of its port would command the site without it; serve "
                         f"the protocol from a site without {credential}, on loopback behind a tunnel")
    return protocols


def main(args: argparse.Namespace) -> int:
    if args.kind not in KINDS:
        raise UsageError(f"unknown module kind {args.kind!r}; known kinds: {', '.join(sorted(KINDS))}")
    if args.describe_config:
        print(module_schema(args.kind).reference(), end="")
        return 0
    # what serving needs (gRPC, TLS), imported only to serve: --describe-config answers without
    from hybridsim.wire.server import SiteServer

    if args.config is None:
        raise UsageError("--config: give the module's configuration file (SITE.toml or SITE.json)")
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    listen = _listen_address(args.listen)
    max_message_bytes = _message_bytes(args.max_message_mib)
    health_listen = None if args.health_listen is None else _listen_address(args.health_listen, "--health-listen")
    link_listen = None if args.link_listen == "none" else _listen_address(args.link_listen, "--link-listen", " or none")
    access = site_access(args)
    refusal = access.listen_refusal(listen)
    if refusal:
        raise UsageError(refusal)
    protocols = _protocol_addresses(args)
    config = load_config(args.config)
    protocol_tables = {table: config.pop(table, None) for table in {p.table for p in PROTOCOLS.values()}}
    name = args.name or args.config.stem
    try:
        module_schema(args.kind).check(config)
    except ConfigError as exc:
        raise UsageError(exc.located(f"in site {name!r} (config {args.config})")) from None
    if args.move_to is not None:
        return _move_to(args, config)
    base_dir = (args.base_dir or args.config.parent).resolve()
    _refuse_ports_in_use(f"site {name} ({args.kind}, {args.config})", listen, protocols)
    try:
        server = SiteServer(partial(build_module, args.kind, config, base_dir), name, listen,
                            max_message_bytes=max_message_bytes, access=access,
                            health_listen=health_listen, link_listen=link_listen,
                            describe_info=codec.config_info(config))
    except (ModuleError, ValueError) as exc:
        raise UsageError(f"site {name} ({args.kind}, {args.config}): {exc}") from None
    notice = _keep_hold(server, args)
    try:
        extra = serve_protocols(server.servicer, protocols, protocol_tables, max_message_bytes)
    except ModuleError as exc:
        server.stop()
        raise UsageError(f"site {name} ({args.kind}, {args.config}): {exc}") from None
    with _stop_signals() as stop_signal:
        if args.port_file:
            _write_port(args.port_file, server.port)
        print(f"hybridsim site {name}: serving {_article(args.kind)} {args.kind} module on {server.address}"
              + "".join(f", {option} on {lab.address}" for option, lab in extra.items()), flush=True)
        while not select.select([stop_signal], [], [], _PARENT_CHECK_S)[0]:
            if args.parent_pid is not None and os.getppid() != args.parent_pid:
                log.info("site %s: its parent process %d exited", name, args.parent_pid)
                break
        for lab in extra.values():
            lab.stop()
        server.stop()
    if notice is not None:
        notice.unlink(missing_ok=True)
    return 0


def _message_bytes(mib: float) -> int:
    """--max-message-mib in bytes: above zero (gRPC takes a negative size for no limit at all) and below 2048 MiB (gRPC
    counts a message's bytes in a signed 32-bit integer)."""
    if not 0 < mib < 2048:  # NaN too
        raise UsageError(f"--max-message-mib {mib:g}: give a size above 0 and below 2048 (MiB; default "
                         f"{codec.DEFAULT_MAX_MESSAGE_BYTES / 2**20:g})")
    return int(mib * 2**20)


def _refuse_ports_in_use(site: str, listen: str, protocols: dict[str, str]) -> None:
    """UsageError naming the first of the site's addresses where another program listens."""
    for option, address in (("--listen", listen), *((f"--{o}", a) for o, a in protocols.items())):
        if in_use(address):
            raise UsageError(f"{site}: cannot listen on {address} ({option}): {BUSY}")


def _keep_hold(server: SiteServer, args: argparse.Namespace) -> Path | None:
    """``--hold-file``: the site's hold kept in a file across its restarts (hybridsim.modules.limits.Interlock);
    an experimental site's hold shown to ``--move-to`` beside it too (its notice: removed when the site ends)."""
    interlock = server.servicer.interlock()
    if args.hold_file is not None:
        if interlock is None:
            server.stop()
            raise UsageError(f"--hold-file: {_article(args.kind)} {args.kind} site without [limits] sets no hold")
        interlock.keep_in(args.hold_file)
    if args.kind != "experimental":
        return None
    from hybridsim.modules.experimental.held import publish

    return publish(interlock, args.config, server.address)


def _move_to(args: argparse.Namespace, config: dict[str, Any]) -> int:
    """``--move-to``: the ramp of the actuators under the site's gate (hybridsim.modules.experimental.move)."""
    from hybridsim.modules.experimental.held import held
    from hybridsim.modules.experimental.move import move_to

    if args.kind != "experimental":
        raise UsageError(f"--move-to moves an experimental site's actuators; a {args.kind} site has none")
    try:
        strokes = [float(value) for value in args.move_to.split(",")]
    except ValueError:
        raise UsageError(f"--move-to: give strokes in m, e.g. 0 or 0,0.01, not {args.move_to!r}") from None
    hold = held(args.config)
    if hold is None and args.hold_file is not None and args.hold_file.exists():
        hold = (f"its hold file {args.hold_file} says it is held since {args.hold_file.read_text().strip()}; an "
                "operator clears the hold at the site (hybridsim site-control HOST:PORT --clear)")
    if hold is not None:
        raise UsageError(f"--move-to ({args.config}): {hold}; nothing was sent")
    try:
        lines = move_to(config, strokes, (args.base_dir or args.config.parent).resolve())
    except ModuleError as exc:
        raise UsageError(f"--move-to ({args.config}): {exc}") from None
    print("\n".join(lines))
    return 0


@contextmanager
def _stop_signals() -> Iterator[socket.socket]:
    """A socket that becomes readable when SIGTERM or SIGINT arrives (later ones are ignored: the site stops).

    The interpreter's C-level handler writes the signal to the socket (signal.set_wakeup_fd) and the Python
    handler does nothing, so no handler takes a lock the main thread may hold: an Event.set() in a handler
    deadlocks when the signal lands while the main thread is inside the same Event's wait or set.
    """
    writer, reader = socket.socketpair()
    writer.setblocking(False)  # set_wakeup_fd needs a non-blocking descriptor
    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: None)
    try:
        yield reader
    finally:
        signal.set_wakeup_fd(previous)
        writer.close()
        reader.close()
        for sig in (signal.SIGTERM, signal.SIGINT):  # the site is ending: ignored at the C level (a Python
            signal.signal(sig, signal.SIG_IGN)  # handler is reset to the default while the interpreter finalizes)
