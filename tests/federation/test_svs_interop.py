"""ndnsci's State Vector Sync against NDNd's own: the ``pure-sync`` example of NDNd (a peer
nobody here wrote, built by deploy/forwarder/build-svs-peer.sh) and a
:class:`~ndnsci_catalog.federation.svs.SyncNode` join one group on one NDNd forwarder, and each
sees the
other's sequence numbers."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import wait_for

from ndnsci.ndn import keys, name
from ndnsci_catalog.federation import svs

from .conftest import REPO
from .sites import Site, environment

GROUP = "/ndn/svs"  # the example's group, fixed in its code


@pytest.fixture(scope="module")
def peer_binary() -> Path:
    built = subprocess.run(
        [str(REPO / "deploy" / "forwarder" / "build-svs-peer.sh")],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return Path(built.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def site(make_sites) -> Site:  # type: ignore[no-untyped-def]
    (one,) = make_sites("solo")
    return one


@pytest.fixture
def peer(peer_binary: Path, site: Site) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [str(peer_binary), "/ndnd-peer"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, env={"NDN_CLIENT_TRANSPORT": site.fw.uri},
    )  # fmt: skip
    yield proc
    proc.terminate()
    proc.wait(10)


def test_ndnd_and_ndnsci_see_each_others_sequence_numbers(
    site: Site, peer: subprocess.Popen[str]
) -> None:
    seen: list[svs.Update] = []
    with environment(NDNSCI_CONFIG_DIR=site.env["NDNSCI_CONFIG_DIR"]):
        key = keys.load()
    node = svs.SyncNode(
        b"".join(name.from_uri(GROUP)), b"".join(name.from_uri("/ndnsci-node")),
        boot=int(time.time()), key=key, key_name=b"".join(name.from_uri("/ndnsci-node/KEY")),
        on_update=seen.append, transport=site.fw.uri, periodic=2,
    )  # fmt: skip
    node.start()
    try:
        node.publish(7)
        # NDNd's node publishes a new sequence number every 3 s: ours hears them
        peer_name = b"".join(name.from_uri("/ndnd-peer"))
        wait_for(lambda: any(u.node == peer_name and u.seq >= 2 for u in seen), 30,
                 "NDNd's updates at our node")  # fmt: skip
        node.publish(9)
        time.sleep(2)
    finally:
        node.stop()
        peer.terminate()
    log = peer.communicate(timeout=10)[0]
    # and NDNd's node hears ours (its log: update="{Name:/ndnsci-node Boot:... High:9 Low:8}")
    highs = [int(h) for h in re.findall(r"Name:/ndnsci-node Boot:\d+ High:(\d+)", log)]
    assert 7 in highs and 9 in highs, log[-2000:]
