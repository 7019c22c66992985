"""The step link is not offered across network namespaces (what each container of the compose files has).

A site daemon serves its link on 127.0.0.1 of its namespace; a client reading the site's Describe info from
another namespace (a process started with `unshare --net`, as root) must get no link address, since its
own 127.0.0.1 is another machine's loopback as far as the site is concerned, while a client in the site's
namespace gets the TCP address. tests/deploy/test_containers.py checks the same between real containers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from hybridsim.coordinator.cli.site import load_config
from hybridsim.wire import link
from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.remote import RemoteModule
from tests.conftest import EXAMPLES

OFFER = "import sys; from hybridsim.wire import link; print(link.link_address({link.INFO_KEY: sys.argv[1]}))"
"""a client's reading of the link a site offers (argument: the value of the site's Describe info)"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="a new network namespace (unshare --net) needs root")
def test_a_client_in_another_network_namespace_gets_no_link_of_the_sites_loopback():
    config = load_config(EXAMPLES / "marths_frame" / "story1.toml")
    with LocalDaemon("linear", config, EXAMPLES / "marths_frame", name="story1", private=True) as daemon:
        info = RemoteModule(daemon.address, credentials=daemon.credentials).describe().info
    offered = info[link.INFO_KEY]
    assert f" netns {link.network_namespace()}" in offered
    here = link.link_address(info)
    assert here is not None and here.startswith("127.0.0.1:")
    run = [sys.executable, "-c", OFFER, offered]
    assert subprocess.run(run, capture_output=True, text=True, check=True).stdout.strip() == here
    elsewhere = subprocess.run(["unshare", "--net", *run], capture_output=True, text=True, check=True)
    assert elsewhere.stdout.strip() == "None", elsewhere.stderr
