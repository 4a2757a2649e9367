"""Failures on the path: tampered segments, a producer or the forwarder going away, resume."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path

import pytest
from support import Serve, ndnd_put, once_published, run_cli

from ndnsci.errors import FetchTimeout, IntegrityError
from ndnsci.ndn import consumer, control, keys, rdr, tlv
from ndnsci.ndn.name import from_uri
from ndnsci.ndn.transport import Face
from ndnsci.sdk.fetch import fetch_file
from ndnsci.sdk.progress import NoProgress
from ndnsci.sdk.transports import FetchOptions, Received

SEG = 1000


class EvilProducer:
    """A producer built from the lean encoder that corrupts chosen segments.

    ``tamper(seg, attempt)`` says whether the ``attempt``-th answer for ``seg`` is corrupted
    (content changed after the digest was computed, no FreshnessPeriod so MustBeFresh skips
    the cached copy). ``advertised`` overrides the SHA-256 put in the metadata.
    """

    def __init__(
        self,
        prefix: str,
        data: bytes,
        tamper,
        advertised: bytes | None = None,
        signer: keys.PublisherKey | None = None,
        served_key: bytes | None = None,
        forge_signature: bool = False,
    ):
        self.prefix = b"".join(from_uri(prefix))
        # metadata signed by ``signer``; ``served_key`` answers the KeyLocator instead of the
        # signer's public key; ``forge_signature`` flips a bit of the signature
        self.signer = signer
        self.key_name = (
            self.prefix + tlv.keyword(b"key") + tlv.generic(signer.key_id) if signer else b""
        )
        self.served_key = served_key if served_key is not None else (signer and signer.public)
        self.forge_signature = forge_signature
        self.data = data
        self.tamper = tamper
        self.version = time.time_ns()
        self.last = max(0, -(-len(data) // SEG) - 1)
        self.sha256 = advertised or hashlib.sha256(data).digest()
        self.attempts: dict[int, int] = {}
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> EvilProducer:
        self.thread.start()
        assert self.ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(5)

    def _run(self) -> None:
        with Face() as face:
            control.register(face, tlv.split_components(self.prefix))
            self.ready.set()
            while not self.stop.is_set():
                if not face.fill(0.05):
                    continue
                replies = []
                for typ, first, vs, last in face.packets():
                    start, end = first, last
                    token = None
                    if typ == tlv.LP_PACKET:
                        frame = tlv.unwrap_lp(face.buf, vs, end)
                        if frame is None:
                            continue
                        start, end, token = frame.start, frame.end, frame.pit_token
                    reply = self._answer(tlv.parse_interest(face.view[start:end]))
                    if reply:
                        replies.append(tlv.lp_wrap(reply, token))
                face.send(replies)

    def _answer(self, interest: tlv.InterestPacket) -> bytes | None:
        name = interest.name_value
        versioned = self.prefix + tlv.version(self.version)
        fbid = tlv.segment(self.last)
        if name == self.prefix + rdr.METADATA:
            return self._metadata(name, versioned, fbid)
        if self.signer is not None and name == self.key_name:
            return tlv.data_digest(name, tlv.meta_info(tlv.CT_KEY, 1), self.served_key)
        if not name.startswith(versioned):
            return None
        seg = tlv.component_number(tlv.split_components(name)[-1])
        content = self.data[seg * SEG : (seg + 1) * SEG]
        attempt = self.attempts.get(seg, 0)
        self.attempts[seg] = attempt + 1
        if self.tamper(seg, attempt):
            good = tlv.data_digest(name, tlv.meta_info(tlv.CT_BLOB, None, fbid), content)
            return good.replace(content, bytes([content[0] ^ 0xFF]) + content[1:], 1)
        return tlv.data_digest(name, tlv.meta_info(tlv.CT_BLOB, 4000, fbid), content)

    def _metadata(self, name: bytes, versioned: bytes, fbid: bytes) -> bytes:
        meta = rdr.Metadata(versioned, fbid, SEG, len(self.data), sha256=self.sha256)
        data_name = name + tlv.version(time.time_ns()) + tlv.segment(0)
        meta_info = tlv.meta_info(tlv.CT_BLOB, 1, tlv.segment(0))
        if self.signer is None:
            return tlv.data_digest(data_name, meta_info, meta.encode())

        def sign(signed: bytes) -> bytes:
            signature = self.signer.sign(signed)
            return bytes([signature[0] ^ 1]) + signature[1:] if self.forge_signature else signature

        info = tlv.signature_info(tlv.SIG_ED25519, self.key_name)
        return tlv.signed_data(data_name, meta_info, meta.encode(), info, sign)


@pytest.fixture
def publisher(tmp_path, monkeypatch) -> keys.PublisherKey:
    monkeypatch.setenv("NDNSCI_CONFIG_DIR", str(tmp_path / "config"))
    return keys.create("evil-test")


def test_metadata_signed_by_the_publisher_key_is_accepted(fw, tmp_path, publisher):
    data = os.urandom(5 * SEG)
    with EvilProducer("/test/evil/signed", data, lambda seg, n: False, signer=publisher):
        fetch_file(
            "/test/evil/signed", str(tmp_path), options=FetchOptions(trust_key=publisher.key_id)
        )
    assert (tmp_path / "signed").read_bytes() == data


def test_a_key_that_does_not_match_its_name_is_refused(fw, tmp_path, publisher):
    impostor = bytes(32)  # any key whose hash is not the key id in the KeyLocator
    data = os.urandom(5 * SEG)
    with (
        EvilProducer(
            "/test/evil/key", data, lambda s, n: False, signer=publisher, served_key=impostor
        ),
        pytest.raises(IntegrityError, match="does not match its name"),
    ):
        fetch_file("/test/evil/key", str(tmp_path))
    assert not (tmp_path / "key").exists()


def test_a_forged_metadata_signature_is_refused(fw, tmp_path, publisher):
    data = os.urandom(5 * SEG)
    with (
        EvilProducer(
            "/test/evil/sig", data, lambda s, n: False, signer=publisher, forge_signature=True
        ),
        pytest.raises(IntegrityError, match="bad Ed25519 signature"),
    ):
        fetch_file("/test/evil/sig", str(tmp_path))
    assert not (tmp_path / "sig").exists()


def test_tampered_segment_is_rejected_and_fetched_again(fw, tmp_path):
    data = os.urandom(50 * SEG + 17)
    opts = FetchOptions(segment_digests="always")
    with EvilProducer("/test/evil/once", data, lambda seg, n: seg in (3, 40) and n == 0):
        result = fetch_file("/test/evil/once", str(tmp_path), options=opts)
    assert (tmp_path / "once").read_bytes() == data
    assert result.rejected == 2 and result.checksum == "verified"
    assert result.attempts == 1 and not result.warnings


def test_with_deferred_digests_a_tampered_segment_costs_a_checked_second_fetch(fw, tmp_path):
    """The default: the segments' digests are left to the published whole-file SHA-256; the
    tampered copy fails it, and the file is fetched again with every segment checked."""
    data = os.urandom(50 * SEG + 17)
    with EvilProducer("/test/evil/deferred", data, lambda seg, n: seg in (3, 40) and n == 0):
        result = fetch_file("/test/evil/deferred", str(tmp_path))
    assert (tmp_path / "deferred").read_bytes() == data
    assert result.checksum == "verified" and result.sha256 == hashlib.sha256(data).hexdigest()
    assert result.attempts == 2  # whatever the retries (fetch_file's default: none)
    # NDNd cached the tampered segments: the checked fetch refuses them, asks past the cache
    assert result.rejected == 2
    assert result.warnings == [
        "the file's SHA-256 did not match the published one: fetched again from nothing, "
        "checking every segment's digest"
    ]


def test_deferred_digests_leave_tampered_bytes_to_the_caller(fw, tmp_path):
    """What deferring means at the transport: the tampered bytes are written, unchecked, and
    the report says so (the engine's check of the file catches them, as above)."""
    data = os.urandom(20 * SEG)
    part = str(tmp_path / "f.part")
    with EvilProducer("/test/evil/unchecked", data, lambda seg, n: seg == 4 and n == 0):
        received = consumer.receive("/test/evil/unchecked", part, part + ".state",
                                    defer_digests=True)  # fmt: skip
    got = Path(part).read_bytes()
    assert received.digests_deferred and received.rejected == 0
    assert got != data and got[4 * SEG + 1 :] == data[4 * SEG + 1 :]
    assert received.published_sha256 == hashlib.sha256(data).hexdigest()


def test_digests_are_checked_without_a_published_sha256_or_when_streaming(
    fw, ndnd_binary, tmp_path
):
    data = os.urandom(300_001)
    prefix = f"/test/evil-put{os.getpid()}/obj"
    part = str(tmp_path / "put.part")
    with ndnd_put(ndnd_binary, prefix, data):
        # ndnd put publishes no whole-file SHA-256: nothing to leave the digests to
        received = once_published(
            lambda: consumer.receive(prefix, part, part + ".state", defer_digests=True)
        )
    assert not received.digests_deferred and Path(part).read_bytes() == data

    class Streaming(consumer.Transfer):  # as the HTTP gateway's: its bytes leave at once
        def _write(self, seg: int, content: memoryview) -> None:
            chunks[seg] = bytes(content)

    chunks: dict[int, bytes] = {}
    tampered = os.urandom(20 * SEG)
    with (
        EvilProducer("/test/evil/stream", tampered, lambda seg, n: seg == 4 and n == 0),
        Face() as face,
    ):
        opts = FetchOptions()
        target = consumer.discover(face, from_uri("/test/evil/stream"), opts)
        received = Received(size=0, published_sha256=None, signer=target.signer)
        state = consumer._State(None, target, resume=False)
        Streaming(face, target, fd=-1, state=state, opts=opts, result=received, progress=None,
                  defer_digests=True).run()  # fmt: skip
    assert not received.digests_deferred and received.rejected == 1
    assert b"".join(chunks[seg] for seg in sorted(chunks)) == tampered


def test_always_tampered_segment_fails_without_output(fw, tmp_path):
    data = os.urandom(20 * SEG)
    evil = EvilProducer("/test/evil/always", data, lambda seg, n: seg == 5)
    with evil, pytest.raises(FetchTimeout, match=r"segment 5: rejected \(digest mismatch\)"):
        fetch_file("/test/evil/always", str(tmp_path), options=FetchOptions(max_retries=3))
    assert not (tmp_path / "always").exists()


def test_wrong_file_checksum_is_refused_and_part_kept(fw, tmp_path):
    data = os.urandom(10 * SEG)
    evil = EvilProducer("/test/evil/sum", data, lambda s, n: False, advertised=b"\0" * 32)
    with evil, pytest.raises(IntegrityError, match="does not match the published"):
        fetch_file("/test/evil/sum", str(tmp_path))
    assert not (tmp_path / "sum").exists() and (tmp_path / "sum.part").exists()


def _fetch_in_thread(uri: str, out: Path, opts: FetchOptions, on_progress):
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["result"] = fetch_file(uri, str(out), options=opts, progress=on_progress)
        except Exception as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def _kill_after(nbytes: int, action):
    fired = threading.Event()  # set once the action is complete
    begun: list[bool] = []

    class Progress(NoProgress):
        def update(self, name: str, done: int, total: int) -> None:
            if done >= nbytes and not begun:
                begun.append(True)
                action()
                fired.set()

    return Progress(), fired


def test_producer_killed_and_restarted_mid_transfer(serve, tmp_path):
    data = os.urandom(40_000_000)
    (serve.root / "big.bin").write_bytes(data)
    serve.start()
    progress, killed = _kill_after(1, serve.kill)
    thread, outcome = _fetch_in_thread(
        f"{serve.prefix}/big.bin", tmp_path, FetchOptions(window=16, cc="fixed"), progress
    )
    assert killed.wait(30)
    time.sleep(0.3)
    serve.start()
    thread.join(60)
    assert not thread.is_alive()
    assert "error" not in outcome, outcome
    assert (tmp_path / "big.bin").read_bytes() == data
    assert outcome["result"].retransmissions > 0


def test_resume_after_the_producer_died(serve, tmp_path):
    data = os.urandom(40_000_000)
    (serve.root / "big.bin").write_bytes(data)
    serve.start()
    uri = f"{serve.prefix}/big.bin"
    progress, _ = _kill_after(1, serve.kill)
    opts = FetchOptions(window=16, cc="fixed", stall_seconds=1.5)
    thread, outcome = _fetch_in_thread(uri, tmp_path, opts, progress)
    thread.join(60)
    assert isinstance(outcome.get("error"), FetchTimeout)
    assert (tmp_path / "big.bin.part").exists() and (tmp_path / "big.bin.part.state").exists()
    serve.start()
    result = fetch_file(uri, str(tmp_path), resume=True)
    assert result.resumed_segments > 0 and result.checksum == "verified"
    assert (tmp_path / "big.bin").read_bytes() == data
    assert not (tmp_path / "big.bin.part.state").exists()


def test_forwarder_restarted_mid_transfer(make_forwarder, tmp_path):
    other = make_forwarder("restart")
    root = tmp_path / "root"
    root.mkdir()
    data = os.urandom(40_000_000)
    (root / "big.bin").write_bytes(data)
    producer = Serve(root, "/test/restart", forwarder=other.uri).start()
    try:
        progress, stopped = _kill_after(1, other.stop)
        opts = FetchOptions(window=16, cc="fixed", forwarder=other.uri)
        thread, outcome = _fetch_in_thread("/test/restart/big.bin", tmp_path, opts, progress)
        assert stopped.wait(30)
        other.start()
        thread.join(60)
        assert not thread.is_alive(), "the consumer hangs"
        assert "error" not in outcome, outcome
        assert (tmp_path / "big.bin").read_bytes() == data
    finally:
        producer.stop()


def test_forwarder_gone_fails_with_a_clear_error(make_forwarder, tmp_path):
    other = make_forwarder("gone")
    root = tmp_path / "root"
    root.mkdir()
    (root / "big.bin").write_bytes(os.urandom(40_000_000))
    producer = Serve(root, "/test/gone", forwarder=other.uri).start()
    try:
        progress, _ = _kill_after(1, other.stop)
        opts = FetchOptions(window=16, cc="fixed", forwarder=other.uri)
        started = time.monotonic()
        thread, outcome = _fetch_in_thread("/test/gone/big.bin", tmp_path, opts, progress)
        thread.join(30)
        assert not thread.is_alive(), "the consumer hangs"
        assert "could not reconnect" in str(outcome.get("error"))
        assert time.monotonic() - started < 15
        assert (tmp_path / "big.bin.part.state").exists()  # --resume can continue
    finally:
        producer.stop()


def test_cli_segment_digests_choose_when_segments_are_checked(fw, tmp_path):
    data = os.urandom(30 * SEG)
    attempts = {}
    for digests in ("auto", "always"):
        uri = f"/test/evil/cli-{digests}"
        with EvilProducer(uri, data, lambda seg, n: seg == 9 and n == 0):
            done = run_cli("fetch", uri, "-o", str(tmp_path), "--json", "-q",
                           "--segment-digests", digests)  # fmt: skip
        assert done.returncode == 0, done.stderr
        (line,) = done.stdout.splitlines()
        attempts[digests] = json.loads(line)["attempts"]
        assert (tmp_path / f"cli-{digests}").read_bytes() == data
    assert attempts == {"auto": 2, "always": 1}
    bad = run_cli("fetch", "/test/evil/x", "--segment-digests", "never")
    assert bad.returncode == 2 and "invalid choice: 'never'" in bad.stderr


def test_an_unknown_segment_digests_value_is_refused_before_any_transfer(tmp_path):
    with pytest.raises(ValueError, match="segment_digests='never': 'auto' or 'always'"):
        fetch_file(
            "/nobody/serves/this", str(tmp_path), options=FetchOptions(segment_digests="never")
        )
