"""The request head of `ndnsci catalog serve` is bounded (issue 29.3): its size and its count of
header fields (431), and the time to send it (408). Raw sockets against a real server."""

from __future__ import annotations

import os
import select
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support import CLI, wait_for

from ndnsci.base.processes import free_port
from ndnsci_catalog.serving import MAX_HEAD_BYTES, MAX_HEADERS

HEAD = b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n"


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    db = Path(tmp_path_factory.mktemp("limits")) / "catalog.db"
    port = free_port()
    server = subprocess.Popen(
        [*CLI, "catalog", "serve", "--db", str(db), "--port", str(port), "--no-gateway"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "NDNSCI_HEAD_SECONDS": "1"},
    )  # fmt: skip
    try:
        wait_for(
            lambda: (
                httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=1).status_code == 200
            ),
            60,
            "the catalog server's health",
            ignoring=httpx.TransportError,
        )
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def _status(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    return int(answer.split()[1])


def _send_until_answered(port: int, head: bytes, filler: bytes, total: int) -> tuple[int, int]:
    """Send ``head`` then ``filler`` up to ``total`` bytes, reading as it goes: (the status
    answered, bytes sent before it came)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head)
        sent = len(head)
        answer = b""
        while sent < total:
            if select.select([s], [], [], 0)[0]:
                answer = s.recv(65536)
                break
            try:
                s.sendall(filler)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(filler)
        if not answer:
            s.settimeout(30)
            answer = s.recv(65536)
        return _status(answer), sent


def test_a_100_mb_header_is_431_before_it_is_read(port):
    status, sent = _send_until_answered(port, HEAD + b"X-Big: ", b"a" * 65536, 100 << 20)
    assert status == 431
    assert sent < 100 << 20, "the server read the whole 100 MB head"


def test_more_header_fields_than_taken_is_431(port):
    fields = b"".join(b"X-F%d: v\r\n" % i for i in range(MAX_HEADERS + 1))
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(HEAD + fields + b"\r\n")
        assert _status(s.recv(65536)) == 431


def test_a_head_at_the_limits_is_answered(port):
    fields = b"".join(
        b"X-F%d: v\r\n" % i for i in range(MAX_HEADERS - 3)
    )  # with Host, X-Big, Connection
    big = b"X-Big: " + b"a" * (MAX_HEAD_BYTES - len(HEAD) - len(fields) - 200) + b"\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(HEAD + fields + big + b"Connection: close\r\n\r\n")
        assert _status(s.recv(65536)) == 200


def test_a_head_sent_too_slowly_is_408_and_closed(port):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(b"GET /api/v1/health HTTP/1.1\r\n")  # and then nothing
        assert _status(s.recv(65536)) == 408
        while s.recv(65536):  # the rest of the answer, then the end of the connection
            pass
