"""``ndnsci serve ROOT --catalog URL``: exactly the published files, under their catalog names.

A stack of its own (private forwarder): its producer serves /CMS like the session's does.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support import changed_in_place, run_cli, wait_for

import ndnsci
from ndnsci.errors import DownloadError, InvalidNameError, ManifestError, NotFoundError
from ndnsci.ndn.consumer import list_directory, receive
from ndnsci.sdk.fetch import fetch_file

LFNS = [
    "store/data/Run2017B/JetHT/NANOAOD/UL2017_MiniAODv2_NanoAODv9-v1/{n}0000/{guid}.root",
]


def lfn(number: int) -> str:
    guid = f"{number:08X}-0000-4000-8000-{number:012X}"
    return LFNS[0].format(n=number % 3, guid=guid)


def write(root: Path, number: int, size: int = 20_000) -> Path:
    path = root / lfn(number)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(os.urandom(size))
    return path


def name_of(number: int) -> str:
    return "/CMS/" + lfn(number)


@pytest.fixture(scope="module")
def published(fw, tmp_path_factory):
    root = tmp_path_factory.mktemp("published")
    for number in range(6):
        write(root, number)
    workdir = Path(f"/tmp/ndnsci-pub-{os.getpid()}")
    with ndnsci.LocalStack(root, port=0, workdir=workdir) as stack:
        yield stack
    shutil.rmtree(workdir, ignore_errors=True)


def test_every_published_file_under_its_name(published, tmp_path):
    result = fetch_file(name_of(0), str(tmp_path))
    assert Path(result.path).read_bytes() == (published.data / lfn(0)).read_bytes()
    assert result.signer.startswith("ed25519:") and result.checksum == "verified"
    listing = dict(list_directory("/CMS/store/data/Run2017B/JetHT"))
    assert listing == {"NANOAOD": True}


def test_unpublished_files_are_not_served_until_published(published, tmp_path):
    extra = write(published.data, 40)
    with pytest.raises(NotFoundError, match="not found"):
        fetch_file(name_of(40), str(tmp_path))
    out = run_cli(
        "publish", str(extra), "--db", published._db_url, env={"XDG_STATE_HOME": str(tmp_path)}
    )
    assert out.returncode == 0, out.stderr
    result = wait_for(  # the producer follows the catalog's change feed (every 2 s in a stack)
        lambda: fetch_file(name_of(40), str(tmp_path)),
        20,
        "the new file to be served",
        every=0.5,
        ignoring=NotFoundError,
    )
    assert Path(result.path).read_bytes() == extra.read_bytes()


def test_a_file_changed_since_publishing_is_refused(published, tmp_path):
    path = published.data / lfn(1)
    path.write_bytes(path.read_bytes() + b"more")
    with pytest.raises(NotFoundError, match="changed since it was published"):
        fetch_file(name_of(1), str(tmp_path))


def test_hostile_names_never_escape(published, tmp_path):
    outside = tmp_path / "secret.root"
    outside.write_bytes(b"secret")
    target = published.data / lfn(2)
    target.unlink()
    target.symlink_to(outside)  # swapped for a link out of the tree after the scan
    with pytest.raises(NotFoundError, match="outside the served tree"):
        fetch_file(name_of(2), str(tmp_path))
    directory = name_of(3).rsplit("/", 1)[0]
    part = str(tmp_path / "hostile.part")
    dots = f"{directory}/../../../../../etc/passwd"
    with pytest.raises(InvalidNameError, match=r"'\.\.' name no component"):  # nothing is sent
        receive(dots, part, part + ".state")
    with pytest.raises(ManifestError, match=r"'\.\.' name no component"):
        fetch_file(dots, str(tmp_path))
    for hostile in (f"{directory}/%2E%2E", "/CMS/%2Fetc"):
        with pytest.raises(NotFoundError):  # the producer refuses them...
            receive(hostile, part, part + ".state")
        with pytest.raises(ManifestError, match="not safe as a path"):
            fetch_file(hostile, str(tmp_path))  # ...and the engine never asks for them
    with pytest.raises(NotFoundError):  # '......' is the file '...': asked for, not served
        fetch_file(f"{directory}/......", str(tmp_path))
    assert not list(tmp_path.glob("passwd*"))


def test_a_file_changed_in_place_is_not_served_and_the_producer_says_so(published, tmp_path):
    # never asked before: the forwarder's cache holds none of it (the published bytes)
    changed_in_place(published.data / lfn(4))
    part = str(tmp_path / "raw.part")
    # the plain consumer, no catalog: only the producer can refuse it
    with pytest.raises(NotFoundError, match="changed since it was published"):
        receive(name_of(4), part, part + ".state")
    log = published.log_path("producer").read_text()
    assert f"not serving {name_of(4)}: its content" in log
    assert not list(tmp_path.glob("raw.part*")) or Path(part).stat().st_size == 0


def test_a_name_is_checked_against_the_catalog_when_one_is_known(published, tmp_path):
    import sqlite3

    # the catalog's record says other bytes than the producer serves (the producer's own
    # table, read before, still holds the old digest: only the fetch can tell)
    db = published._db_url.removeprefix("sqlite:///")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE files SET sha256 = ? WHERE name = ?", ("ab" * 32, name_of(5)))
    out = tmp_path / "out"
    with pytest.raises(DownloadError) as info:
        ndnsci.fetch([name_of(5)], out, progress=False)  # $NDNSCI_CATALOG: the stack's
    assert "not the catalog's" in info.value.report.failed[0].error
    assert not (out / lfn(5).rsplit("/", 1)[-1]).exists()
    for how, extra, env in (
        ("--catalog", ["--catalog", published.catalog_url], {"NDNSCI_CATALOG": ""}),
        ("NDNSCI_CATALOG", [], {"NDNSCI_CATALOG": published.catalog_url}),
        ("--segment-digests always", ["--segment-digests", "always"], {}),
    ):
        result = run_cli("fetch", name_of(5), "-o", str(out), "-q", *extra, env=env)
        assert result.returncode == 1, (how, result.stdout, result.stderr)
        assert "verified" not in result.stdout and "not the catalog's" in result.stderr, how
        assert not (out / lfn(5).rsplit("/", 1)[-1]).exists(), how
    assert not list(out.glob("*.part"))
    # without a catalog, the publisher's signed SHA-256 alone, as before
    alone = fetch_file(name_of(5), str(tmp_path / "alone"), catalog=False)
    assert alone.checksum == "verified"
