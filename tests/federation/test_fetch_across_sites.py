"""A user at site B finds a file of site A in B's catalog and fetches it by name through B's
forwarder; a second fetch at B is answered from B's cache.

Both sites serve files under ``/CMIP5`` (A: MOHC and the CMS files, B: MIROC), each with its own
producer registered on its own forwarder: the routes by name the federation daemon derives
from the catalog send A's names to A and leave B's at B.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support import wait_for

from ndnsci.errors import TransportError
from ndnsci.ndn import control, forwarder, name
from ndnsci.ndn.transport import Face
from ndnsci.sdk.sample import make_sample

from .sites import Site, link_all

KEEP = {"a": ("cmip5/output1/MOHC", "store"), "b": ("cmip5/output1/MIROC",)}


@pytest.fixture(scope="module")
def two(make_sites: Callable[..., list[Site]]) -> Iterator[list[Site]]:
    group = make_sites("a", "b")
    link_all(group)
    for site in group:
        data = site.dir / "data"
        make_sample(data, big_mib=1)
        _keep_only(data, KEEP[site.name])
        site.data = data  # type: ignore[attr-defined]
        published = subprocess.run(
            [sys.executable, "-m", "ndnsci", "publish", str(data), "--db", site.db],
            capture_output=True, text=True, env={**os.environ, **site.env}, timeout=300,
            check=False,
        )  # fmt: skip
        assert published.returncode == 0, published.stderr
        site.serve_catalog()
        site.federate("--relink-interval", "2")
        site.spawn("producer", "serve", str(data), "--catalog", site.url, "--refresh", "1")
    a, b = group
    wait_for(lambda: a.count("b") == b.count("b") > 0 and b.count("a") == a.count("a") > 0,
             120, "the records at both sites")  # fmt: skip
    wait_for(lambda: "/CMIP5/output1/MOHC" in routed(b), 60, "b's routes to a's files")
    wait_for(lambda: "/CMIP5/output1/MIROC" in routed(a), 60, "a's routes to b's files")
    for site in group:
        wait_for(lambda s=site: " on unix://" in s.log("producer"), 60, "the producer")
    yield group


def routed(site: Site) -> set[str]:
    """The prefixes of the site's FIB."""
    with Face(site.fw.uri) as face:
        return {name.value_to_uri(prefix) for prefix in control.fib(face)}


def _keep_only(root: Path, kept: tuple[str, ...]) -> None:
    for path in sorted(root.rglob("*"), reverse=True):
        relative = path.relative_to(root).as_posix()
        if path.is_file() and not relative.startswith(kept):
            path.unlink()
    for path in sorted(root.rglob("*"), reverse=True):
        if path.is_dir() and not any(path.iterdir()):
            shutil.rmtree(path)


def fetch(site: Site, ndn_name: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndnsci", "fetch", ndn_name, "-o", str(out)],
        capture_output=True, text=True, env={**os.environ, **site.env}, timeout=120,
        check=False,
    )  # fmt: skip


def interests_at(site: Site) -> int:
    return int(forwarder.status(site.fw.sock)["n_in_interests"])


@pytest.mark.parametrize("model", ["HadCM3", None])
def test_a_file_of_another_site_is_fetched_by_name_then_from_the_local_cache(
    two: list[Site], tmp_path: Path, model: str | None
) -> None:
    a, b = two
    # found in b's catalog, held by a (a CMIP5 file under a prefix both serve, or a CMS one)
    found = b.search(model=model, limit=50) if model else b.search(scheme="cms", limit=50)
    (record,) = [
        r for r in found["results"] if r["size"] == max(x["size"] for x in found["results"])
    ]
    assert record["site"] == "a"
    segments = -(-record["size"] // 8000)
    assert segments >= 16
    first = fetch(b, record["name"], tmp_path / "first")
    assert first.returncode == 0, first.stderr
    fetched = tmp_path / "first" / record["filename"]
    original = next(p for p in a.data.rglob(record["filename"]))  # type: ignore[attr-defined]
    assert fetched.read_bytes() == original.read_bytes()
    before = interests_at(a)
    second = fetch(b, record["name"], tmp_path / "second")
    assert second.returncode == 0, second.stderr
    assert (tmp_path / "second" / record["filename"]).read_bytes() == original.read_bytes()
    # only the metadata (MustBeFresh) and sync Interests reached a: the segments came from b
    assert interests_at(a) - before < 8 <= segments


def test_a_file_of_this_site_stays_at_this_site(two: list[Site], tmp_path: Path) -> None:
    a, b = two
    found = b.search(model="MIROC5", limit=50)["results"]
    (record,) = [r for r in found if r["size"] == max(x["size"] for x in found)]
    assert record["site"] == "b"
    segments = -(-record["size"] // 8000)
    assert segments >= 16
    before = interests_at(a)
    done = fetch(b, record["name"], tmp_path)
    assert done.returncode == 0, done.stderr
    # a sees its sync Interests (a few, whatever the load), never the file's segments
    assert interests_at(a) - before < 8 <= segments


def test_the_routes_follow_the_catalog(two: list[Site]) -> None:
    _, b = two
    at_b = routed(b)
    assert "/CMIP5/output1/MOHC" in at_b  # a's, a level below the root both serve
    assert "/CMS" in at_b  # only a has CMS files
    assert "/CMIP5/output1/MIROC" not in at_b  # b's own: its producer's /CMIP5 takes it
    assert "/CMIP5" in at_b  # (b's producer)


def test_a_restarted_forwarder_gets_its_links_and_routes_back(
    two: list[Site], tmp_path: Path
) -> None:
    """Last in the module: b's forwarder restarts empty (no faces, routes or cache); b's
    daemon sets its link to a and the routes to a's files again, and a's file is fetched."""
    a, b = two
    b.fw.stop()
    b.fw.start()
    wait_for(lambda: "/CMIP5/output1/MOHC" in _fib_or_empty(b), 60, "b's routes to a's files")
    (record, *_) = b.search(model="HadCM3", limit=1)["results"]
    done = fetch(b, record["name"], tmp_path)
    assert done.returncode == 0, done.stderr
    original = next(p for p in a.data.rglob(record["filename"]))  # type: ignore[attr-defined]
    assert (tmp_path / record["filename"]).read_bytes() == original.read_bytes()


def _fib_or_empty(site: Site) -> set[str]:
    """The FIB's prefixes; none while the forwarder is down."""
    try:
        return routed(site)
    except TransportError:
        return set()
