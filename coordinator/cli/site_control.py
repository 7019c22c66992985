"""`hybridsim site-control HOST:PORT [--clear]`: the operator's command of a site (docs/security.md).

Says whether the site at HOST:PORT is held and why (a measured overload, a relaxation beyond its threshold),
or, with --clear, clears that hold so that commands reach its actuators again (the site logs who cleared it,
from where, and what it was).  The call carries the site's credentials as a coordinator's does: --token-file
for a site started with --token-file, --tls-ca (with --tls-cert/--tls-key for mutual TLS) for a TLS site.

    hybridsim site-control 127.0.0.1:50051 --token-file certs/story1.token
    hybridsim site-control 127.0.0.1:50051 --token-file certs/story1.token --clear --operator "J. Doe"
"""

from __future__ import annotations

import argparse
import getpass
from pathlib import Path
from typing import Any

from hybridsim.coordinator.errors import UsageError


def register(sub: Any) -> None:
    parser = sub.add_parser("site-control", help="say whether a site is held and why; --clear clears its hold",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("address", metavar="HOST:PORT", help="the site's address (its --listen)")
    parser.add_argument("--clear", action="store_true", help="clear the site's hold (logged at the site)")
    parser.add_argument("--operator", default=None, help="who clears it, in the site's log (default: this user)")
    parser.add_argument("--token-file", type=Path, metavar="FILE", help="the site's access token")
    parser.add_argument("--tls-ca", type=Path, metavar="FILE", help="the CA of the site's certificate (TLS)")
    parser.add_argument("--tls-cert", type=Path, metavar="FILE", help="a client certificate (mutual TLS)")
    parser.add_argument("--tls-key", type=Path, metavar="FILE", help="its key")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import grpc

    from hybridsim.wire.credentials import ClientCredentials
    from hybridsim.wire.security import CredentialError
    from hybridsim.wire.site_control import call

    tls = {key: str(value) for key, value in (("ca", args.tls_ca), ("cert", args.tls_cert), ("key", args.tls_key))
           if value is not None}
    try:
        credentials = ClientCredentials.from_table(tls or None, None if args.token_file is None else
                                                   str(args.token_file), Path.cwd(), "site-control", args.address)
        channel = (credentials or ClientCredentials()).channel(args.address)
    except (CredentialError, ValueError) as exc:
        raise UsageError(str(exc).replace("site-control.tls.", "--tls-").replace("site-control.token_file",
                                                                                 "--token-file")) from None
    request = {"operator": args.operator or getpass.getuser()} if args.clear else {}
    try:
        with channel:
            reply = call(channel, "Clear" if args.clear else "Status", request)
    except grpc.RpcError as exc:
        print(f"hybridsim site-control: site at {args.address}: {exc.code().name}: {exc.details()}")
        return 1
    if args.clear:
        cleared = reply.get("cleared")
        print(f"site {reply['site']}: " + (f"hold cleared (it was: {cleared})" if cleared else "no hold to clear"))
    else:
        held = reply.get("held")
        print(f"site {reply['site']}: " + (f"held since {held}" if held else "not held"))
    return 0
