"""Topology files: the bundled ones load, and every mistake gets a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from ndnsci.errors import TestbedError
from ndnsci.testbed import topology

REPO = Path(__file__).resolve().parents[2]


def test_default_topology_is_the_seed_shape():
    topo = topology.load(topology.bundled("default"))
    consumers = sorted(n.name for n in topo.role("consumer"))
    assert consumers == ["c1", "c2", "c3", "c4"]
    assert {n.site for n in topo.role("consumer")} == {"A"}
    assert sorted(n.name for n in topo.role("router")) == ["gwa", "gwb"]
    assert all(n.cs_capacity > 0 for n in topo.role("router"))
    (server,) = topo.role("server")
    assert server.site == "B" and server.serve and server.http_port
    wan = topo.wan()
    assert (wan.a, wan.b, wan.rate_mbps, wan.rtt_ms) == ("gwa", "gwb", 200, 40)
    assert all((link.rate_mbps or 0) > wan.rate_mbps for link in topo.links if link is not wan)
    assert [link.name for link in topo.path("c1", "server")] == ["c1-gwa", "wan", "gwb-server"]
    # the consumers are end hosts on gwa's forwarder (docs/testbed.md, caching)
    assert {n.attach for n in topo.role("consumer")} == {"gwa"}
    assert not any(n.has_forwarder for n in topo.role("consumer"))
    assert topo.rtt_ms("c3", "server") == 40
    assert topo.bottleneck_mbps("c3", "server") == 200


def test_small_topology_has_two_nodes_and_one_delayed_link():
    topo = topology.load(REPO / "deploy" / "testbed" / "small.toml")
    assert sorted(topo.nodes) == ["c", "s"]
    assert len(topo.links) == 1 and topo.links[0].delay_ms > 0 and topo.links[0].rate_mbps


def test_addresses_are_per_link_and_unique():
    topo = topology.load(topology.bundled("default"))
    addresses = [link.address(end) for link in topo.links for end in (link.a, link.b)]
    assert len(addresses) == len(set(addresses))
    wan = topo.wan()
    assert wan.address("gwa").rsplit(".", 1)[0] == wan.address("gwb").rsplit(".", 1)[0]
    with pytest.raises(TestbedError, match="not an end"):
        wan.address("c1")


def test_link_derived_values():
    topo = topology.load(topology.bundled("default"))
    wan = topo.wan()
    assert wan.face_mtu == 8800  # a 9000-byte veth carries NDNd's largest packet whole
    # tbf queue: one round trip at the link rate
    assert wan.queue_bytes == int(200e6 / 8 * 0.040)


def test_with_nodes_changes_a_copy_and_checks_capacity():
    topo = topology.load(topology.bundled("default"))
    changed = topo.with_nodes(gwa={"cs_capacity": 0})
    assert changed.nodes["gwa"].cs_capacity == 0
    assert topo.nodes["gwa"].cs_capacity == 131070
    with pytest.raises(TestbedError, match="per forwarding thread"):
        topo.with_nodes(gwa={"cs_capacity": 70000, "threads": 1})


NODES = """
[nodes]
a = { role = "consumer" }
b = { role = "server", serve = "/x" }
"""
LINK = """
[[links]]
a = "a"
b = "b"
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = 'x'\n", r"\[nodes\] is missing"),
        (NODES, "no \\[\\[links\\]\\]"),
        (NODES + LINK + "colour = 'red'\n", "unknown key"),
        (NODES.replace('"consumer"', '"client"') + LINK, "role must be one of"),
        (NODES.replace("a = {", "A = {") + LINK.replace('"a"', '"A"'), "node name"),
        (NODES + LINK.replace('b = "b"', 'b = "zz"'), "'zz' is not a node"),
        (NODES + LINK.replace('b = "b"', 'b = "a"'), "two different nodes"),
        (NODES + LINK + "rate_mbps = -5\n", "rate_mbps must be a number"),
        (NODES + LINK + "rate_mbps = 'fast'\n", "rate_mbps must be a number"),
        (NODES + LINK + "face = 'quic'\n", "face must be udp or tcp"),
        (NODES + LINK + "mtu = 100000\n", "mtu must be at most"),
        (
            NODES.replace('role = "consumer"', 'role = "router", cs_policy = "lfu"') + LINK,
            "not offered by NDNd",
        ),
        (
            NODES.replace('role = "consumer"', 'role = "router", cs_capacity = 200000') + LINK,
            "needs 4 threads",
        ),
        (
            NODES.replace('role = "consumer"', 'role = "consumer", serve = "/y"') + LINK,
            "belong on a server",
        ),
        (NODES.replace('serve = "/x"', 'serve = "x"') + LINK, "must be an NDN prefix"),
        (NODES.replace('serve = "/x"', 'serve = "/x", http_port = 70000') + LINK, "TCP port"),
        (NODES.replace('serve = "/x"', 'serve = "/x", data = "/etc"') + LINK, "data must be"),
        (NODES + "c = { role = 'consumer' }\n" + LINK, "not connected"),
        (NODES + LINK + LINK + "name = 'second'\n", "two links to the same node"),
        (
            NODES
            + LINK
            + "name = 'wan'\n"
            + LINK.replace('b = "b"', 'b = "c"')
            + "name = 'wan'\n"
            + "[nodes.c]\nrole = 'consumer'\n",
            "link names must differ",
        ),
        (NODES + LINK + "[[routes]]\nnode = 'a'\nprefix = '/y'\nvia = 'a'\n", "not a neighbour"),
        (NODES + LINK + "[[routes]]\nnode = 'a'\nprefix = 'y'\nvia = 'b'\n", "NDN name"),
        # an attached consumer: to a router, its only link, no routes of its own
        (NODES.replace('role = "consumer"', 'role = "consumer", attach = "b"') + LINK, "router"),
        (
            NODES.replace('role = "server"', 'role = "router", attach = "a"').replace(
                ', serve = "/x"', ""
            )
            + LINK,
            "belongs on a consumer",
        ),
        (
            NODES.replace('role = "consumer"', 'role = "consumer", attach = "r"')
            + "r = { role = 'router' }\n"
            + LINK
            + LINK.replace('b = "b"', 'b = "r"'),
            "its only link",
        ),
        (
            NODES.replace('role = "consumer"', 'role = "consumer", attach = "r"')
            + "r = { role = 'router' }\n"
            + LINK.replace('a = "a"', 'a = "r"')
            + LINK.replace('b = "b"', 'b = "r"')
            + "[[routes]]\nnode = 'a'\nprefix = '/y'\nvia = 'r'\n",
            "has no forwarder",
        ),
    ],
)
def test_bad_topologies_are_refused_clearly(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(TestbedError, match=message):
        topology.load(path)


def test_not_toml_and_missing_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[nodes\n")
    with pytest.raises(TestbedError, match="not valid TOML"):
        topology.load(path)
    with pytest.raises(TestbedError, match="cannot read the topology"):
        topology.load(tmp_path / "absent.toml")
    with pytest.raises(TestbedError, match="bundled: default, small"):
        topology.bundled("nosuch")


def test_next_hops_follow_the_fewest_hops(tmp_path):
    # a ring of five: n0-n1-n2-n3-n4-n0
    path = tmp_path / "ring.toml"
    path.write_text(
        "[nodes]\n"
        + "".join(f"n{i} = {{ role = 'router' }}\n" for i in range(5))
        + "".join(f"[[links]]\na = 'n{i}'\nb = 'n{(i + 1) % 5}'\n" for i in range(5))
    )
    topo = topology.load(path)
    hops = topo.next_hops("n4")
    assert hops["n0"].other("n0") == "n4"
    assert hops["n1"].other("n1") == "n0"  # n1-n0-n4, not n1-n2-n3-n4
    assert hops["n2"].other("n2") == "n3"
    assert [link.name for link in topo.path("n1", "n4")] == ["n0-n1", "n4-n0"]
