"""GET/HEAD /data/<NDN name>: whole files, single ranges, conditional requests, clear errors,
bounded memory, concurrent readers; over real HTTP, a real forwarder and a real producer."""

from __future__ import annotations

import hashlib
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from support import Serve, wait_for

from .conftest import SIZES, Server, Site, catalog_of, gateway_app, record

SEGMENT = 8000  # the producer's segment size


def etag_of(data: bytes) -> str:
    return f'"{hashlib.sha256(data).hexdigest()}"'


@pytest.mark.parametrize("relative", [r for r in SIZES if SIZES[r]])
def test_whole_file_with_its_headers(site: Site, relative: str):
    response = httpx.get(site.data(relative), timeout=30)
    data = site.bytes_of(relative)
    assert response.status_code == 200
    assert response.content == data
    assert response.headers["content-length"] == str(len(data))
    assert response.headers["etag"] == etag_of(data)
    assert response.headers["accept-ranges"] == "bytes"
    assert response.headers["content-type"] == "application/octet-stream"


def test_empty_file(site: Site):
    response = httpx.get(site.data("empty.bin"), timeout=30)
    assert response.status_code == 200 and response.content == b""
    assert response.headers["content-length"] == "0"


def test_head_gives_the_headers_without_the_body(site: Site):
    data = site.bytes_of("big.bin")
    response = httpx.head(site.data("big.bin"), timeout=30)
    assert response.status_code == 200 and response.content == b""
    assert response.headers["content-length"] == str(len(data))
    assert response.headers["etag"] == etag_of(data)
    ranged = httpx.head(site.data("big.bin"), headers={"Range": "bytes=10-19"}, timeout=30)
    assert ranged.status_code == 206 and ranged.headers["content-length"] == "10"


SIZE = SIZES["big.bin"]
RANGES = [
    ("bytes=0-0", 0, 0),
    ("bytes=0-99", 0, 99),
    (f"bytes={SEGMENT - 1}-{SEGMENT}", SEGMENT - 1, SEGMENT),  # across a segment boundary
    (f"bytes={SEGMENT}-{2 * SEGMENT - 1}", SEGMENT, 2 * SEGMENT - 1),  # exactly one segment
    (f"bytes={5 * SEGMENT + 17}-{40 * SEGMENT + 3}", 5 * SEGMENT + 17, 40 * SEGMENT + 3),
    ("bytes=1000000-", 1_000_000, SIZE - 1),
    ("bytes=-100", SIZE - 100, SIZE - 1),
    (f"bytes={SIZE - 1}-{SIZE + 1000}", SIZE - 1, SIZE - 1),  # clipped at the end
    (f"bytes=-{SIZE + 5}", 0, SIZE - 1),
]


@pytest.mark.parametrize(("header", "first", "last"), RANGES)
def test_single_range_gives_exactly_those_bytes(site: Site, header: str, first: int, last: int):
    response = httpx.get(site.data("big.bin"), headers={"Range": header}, timeout=30)
    assert response.status_code == 206, response.text
    assert response.content == site.bytes_of("big.bin")[first : last + 1]
    assert response.headers["content-range"] == f"bytes {first}-{last}/{SIZE}"
    assert response.headers["content-length"] == str(last - first + 1)


@pytest.mark.parametrize(
    "header",
    [f"bytes={SIZE}-", f"bytes={SIZE + 10}-{SIZE + 20}", "bytes=-0",
     f"bytes={'9' * 5000}-", f"bytes=0-{'9' * 5000}", f"bytes=-{'9' * 5000}"],
)  # fmt: skip
def test_range_beyond_the_end_is_416(site: Site, header: str):
    response = httpx.get(site.data("big.bin"), headers={"Range": header}, timeout=30)
    assert response.status_code == 416
    assert response.headers["content-range"] == f"bytes */{SIZE}"
    assert "range not satisfiable" in response.json()["detail"]


@pytest.mark.parametrize("header", ["bytes=0-10,20-30", "lines=1-2", "bytes=9-3", "bytes=x-y"])
def test_other_range_headers_are_ignored(site: Site, header: str):
    response = httpx.get(site.data("medium.bin"), headers={"Range": header}, timeout=30)
    assert response.status_code == 200
    assert response.content == site.bytes_of("medium.bin")


def test_conditional_requests(site: Site):
    data = site.bytes_of("medium.bin")
    url = site.data("medium.bin")
    assert httpx.get(url, headers={"If-None-Match": etag_of(data)}).status_code == 304
    assert httpx.get(url, headers={"If-None-Match": '"other"'}).content == data
    # "*": any current representation (RFC 9110 13.1.2), the file exists: not modified
    for header in ("*", '"other", *'):
        star = httpx.get(url, headers={"If-None-Match": header})
        assert star.status_code == 304 and star.content == b"", header
    assert httpx.head(url, headers={"If-None-Match": "*"}).status_code == 304
    missing = httpx.get(site.data("no-such.bin"), headers={"If-None-Match": "*"})
    assert missing.status_code == 404
    same = httpx.get(url, headers={"Range": "bytes=5-9", "If-Range": etag_of(data)})
    assert same.status_code == 206 and same.content == data[5:10]
    changed = httpx.get(url, headers={"Range": "bytes=5-9", "If-Range": '"other"'})
    assert changed.status_code == 200 and changed.content == data


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/data/GWTEST/not-published.bin", 404, "in the catalog"),
        ("/data/single", 400, "needs a root"),
        ("/data/GWTEST/../etc/passwd", 404, "in the catalog"),  # HTTP clients fold the ..
        ("/data/GWTEST/%2E%2E/x", 400, "not a valid NDN name"),
        ("/data/GWTEST/a%00b", 400, "unsafe as a path"),
    ],
)
def test_bad_names(site: Site, path: str, status: int, words: str):
    response = httpx.get(site.url + path, timeout=30)
    assert response.status_code == status, response.text
    assert words in response.json()["detail"]


def test_no_producer_is_504(site: Site):
    started = time.monotonic()
    response = httpx.get(f"{site.url}/data/GWNOPRODUCER/p{os.getpid()}/x.bin", timeout=30)
    assert response.status_code == 504
    assert "no NDN producer answered" in response.json()["detail"]
    assert time.monotonic() - started < 10


def test_a_producer_without_the_file_is_502(site: Site):
    response = httpx.get(site.data("missing.bin"), timeout=30)
    assert response.status_code == 502
    assert "does not serve" in response.json()["detail"]


def test_another_version_at_the_producer_is_502(site: Site):
    response = httpx.get(site.data("wrongsize.bin"), timeout=30)
    assert response.status_code == 502
    assert "500 bytes, the catalog lists 400" in response.json()["detail"]


def test_twenty_concurrent_range_readers(site: Site):
    data = site.bytes_of("big.bin")
    rng = random.Random(7)
    jobs = []
    for _ in range(20):
        first = rng.randrange(SIZE)
        jobs.append((first, min(SIZE - 1, first + rng.randrange(1, 600_000))))

    def read(job: tuple[int, int]) -> bool:
        first, last = job
        with httpx.Client(timeout=60) as client:
            for _ in range(3):
                got = client.get(site.data("big.bin"), headers={"Range": f"bytes={first}-{last}"})
                if got.status_code != 206 or got.content != data[first : last + 1]:
                    return False
        return True

    with ThreadPoolExecutor(20) as pool:
        assert all(pool.map(read, jobs))


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def lone(fw, tmp_path):
    """A producer and a gateway of the test's own (the test may kill the producer)."""
    root = tmp_path / "root"
    root.mkdir()
    data = os.urandom(96 << 20)
    (root / "huge.bin").write_bytes(data)
    prefix = f"/GWLONE/p{os.getpid()}-{tmp_path.name}"
    db = f"sqlite:///{tmp_path / 'catalog.db'}"
    catalog_of(db, [record(f"{prefix}/huge.bin", data)])
    producer = Serve(root, prefix).start()
    try:
        with Server(gateway_app(db, fw.uri)) as server:
            yield f"{server.url}/data{prefix}/huge.bin", data, producer
    finally:
        producer.stop()


def test_memory_is_bounded_for_a_slow_reader(lone):
    url, data, _ = lone
    baseline, peak = _rss(), 0
    digest = hashlib.sha256()
    with httpx.stream("GET", url, timeout=60) as response:
        assert response.status_code == 200
        for i, chunk in enumerate(response.iter_bytes(1 << 20)):
            digest.update(chunk)
            peak = max(peak, _rss())
            if i < 24:
                time.sleep(0.05)  # slower than the fetch: the gateway must wait, not buffer
    assert digest.hexdigest() == hashlib.sha256(data).hexdigest()
    assert peak - baseline < 40 << 20, f"grew by {(peak - baseline) >> 20} MiB for a 96 MiB file"


def test_a_producer_killed_mid_transfer_cuts_the_response_short(lone):
    url, data, producer = lone
    received = 0
    with httpx.stream("GET", url, timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["content-length"] == str(len(data))
        with pytest.raises(httpx.RemoteProtocolError):
            for chunk in response.iter_bytes(1 << 20):
                if received == 0:
                    producer.kill()
                received += len(chunk)
    assert 0 < received < len(data)


def test_threads_end_with_their_requests(site: Site):
    before = {t.name for t in threading.enumerate() if t.name == "ndnsci-gateway-stream"}
    for _ in range(3):
        with httpx.stream("GET", site.data("big.bin"), timeout=30) as response:
            next(response.iter_bytes(1 << 16))  # then hang up

    def streams() -> int:
        return sum(1 for t in threading.enumerate() if t.name == "ndnsci-gateway-stream")

    wait_for(
        lambda: streams() <= len(before),
        20,
        "the stream threads to end after their clients left",
        detail=lambda: f": {streams()} still running",
    )


def test_a_file_published_again_is_fetched_in_its_new_version(site: Site):
    url = site.data("medium.bin")
    data = site.bytes_of("medium.bin")
    assert httpx.get(url, headers={"Range": "bytes=0-9"}).content == data[:10]  # version cached
    path = site.root / "medium.bin"
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # the producer's new version
    time.sleep(1.2)  # the producer re-reads the file's mtime each second: the old one is refused
    tail = httpx.get(url, headers={"Range": f"bytes={len(data) - 50}-"}, timeout=30)
    assert tail.status_code == 206 and tail.content == data[-50:]


def test_a_file_changed_and_published_again_is_served_in_its_new_content(site: Site):
    url = site.data("small.bin")
    assert httpx.get(url).content == site.bytes_of("small.bin")  # its version is cached
    changed = os.urandom(SIZES["small.bin"])
    (site.root / "small.bin").write_bytes(changed)
    catalog_of(site.db, [record(f"{site.prefix}/small.bin", changed)])
    time.sleep(1.2)
    response = httpx.get(url, timeout=30)
    assert response.status_code == 200 and response.content == changed
    assert response.headers["etag"] == etag_of(changed)


def test_a_file_changed_behind_the_catalog_is_a_clear_502(fw, tmp_path):
    """The file changes on the producer's disk after publication (same size and mtime): the
    producer serves a new version (its ctime moved), whose signed SHA-256 is not the catalog's:
    502 naming the mismatch, and none of the changed bytes."""
    root = tmp_path / "root"
    root.mkdir()
    path = root / "file.bin"
    data = os.urandom(3 << 20)
    path.write_bytes(data)
    prefix = f"/GWCHANGED/p{os.getpid()}"
    db = f"sqlite:///{tmp_path / 'catalog.db'}"
    catalog_of(db, [record(f"{prefix}/file.bin", data)])
    producer = Serve(root, prefix).start()
    try:
        with Server(gateway_app(db, fw.uri)) as server:
            url = f"{server.url}/data{prefix}/file.bin"
            assert httpx.head(url, timeout=30).status_code == 200  # the producer hashed it
            stat = path.stat()
            with path.open("r+b") as f:
                f.seek(2 << 20)
                f.write(b"\0" * 100)
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            time.sleep(1.2)  # past the producer's stat() cache and the gateway's discovery
            response = httpx.get(url, timeout=60)
            assert response.status_code == 502
            assert "signed SHA-256" in response.text and "is not the catalog" in response.text
            assert response.content.find(b"\0" * 100) == -1
    finally:
        producer.stop()


def test_bytes_that_fail_the_signed_checksum_are_never_a_complete_response(
    fw, tmp_path, monkeypatch
):
    """Every segment's digest is fine but the whole file's is not (a producer signing a
    checksum of other bytes; made here by altering the discovered checksum, with the catalog
    listing the same): the response is cut before its end, never complete."""
    from ndnsci_catalog.gateway import stream as gateway_stream

    root = tmp_path / "root"
    root.mkdir()
    data = os.urandom(3 << 20)
    (root / "file.bin").write_bytes(data)
    other = hashlib.sha256(b"other bytes").digest()
    discover = gateway_stream.consumer.discover

    def lying_discover(*args, **kwargs):
        target = discover(*args, **kwargs)
        if target.sha256 is not None:
            target.sha256 = other
        return target

    monkeypatch.setattr(gateway_stream.consumer, "discover", lying_discover)
    prefix = f"/GWTAMPER/p{os.getpid()}"
    db = f"sqlite:///{tmp_path / 'catalog.db'}"
    listed = record(f"{prefix}/file.bin", data)
    listed["sha256"] = other.hex()
    catalog_of(db, [listed])
    producer = Serve(root, prefix).start()
    try:
        with Server(gateway_app(db, fw.uri)) as server:
            url = f"{server.url}/data{prefix}/file.bin"
            received = bytearray()
            with (
                pytest.raises(httpx.RemoteProtocolError),
                httpx.stream("GET", url, timeout=60) as response,
            ):
                assert response.status_code == 200
                for chunk in response.iter_bytes():
                    received += chunk
            # the client knows: fewer bytes than Content-Length, never the whole file
            assert 0 < len(received) < len(data)
            assert bytes(received) == data[: len(received)]
    finally:
        producer.stop()
