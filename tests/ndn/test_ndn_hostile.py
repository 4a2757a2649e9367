"""Hostile names never reach a file outside the served root: each gets an application Nack."""

from __future__ import annotations

import os

import pytest

from ndnsci.errors import NotFoundError
from ndnsci.ndn import tlv
from ndnsci.ndn.consumer import FetchOptions, discover, fetch_one
from ndnsci.ndn.name import from_uri
from ndnsci.ndn.transport import Face

SECRET = b"top secret, outside the root"


@pytest.fixture
def hostile(serve, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    (serve.root / "ok.txt").write_bytes(b"fine")
    (serve.root / "sub").mkdir()
    os.symlink(outside / "secret.txt", serve.root / "link-out.txt")
    os.symlink(outside, serve.root / "dir-out")
    os.symlink(serve.root / "ok.txt", serve.root / "sub" / "link-in.txt")
    serve.start()
    with Face() as face:
        yield serve.prefix, face


def ask(face, prefix, rel_components):
    components = from_uri(prefix) + rel_components
    return discover(face, components, FetchOptions())


@pytest.mark.parametrize(
    "rel",
    [
        [tlv.generic(b"..")],
        [tlv.generic(b".."), tlv.generic(b"outside"), tlv.generic(b"secret.txt")],
        [tlv.generic(b"sub"), tlv.generic(b".."), tlv.generic(b"..")],
        [tlv.generic(b".")],
        [tlv.generic(b"")],
        [tlv.generic(b"..%2Foutside%2Fsecret.txt".replace(b"%2F", b"/"))],  # encoded slashes
        [tlv.generic(b"/etc/passwd")],
        [tlv.generic(b"ok.txt\0.png")],  # NUL byte
        [tlv.generic(b"link-out.txt")],  # symlink to a file outside
        [tlv.generic(b"dir-out"), tlv.generic(b"secret.txt")],  # symlinked directory outside
        [tlv.generic(b"x" * 300)],  # longer than NAME_MAX
        [tlv.generic(b"a" * 200)] * 25,  # longer than PATH_MAX
        [tlv.keyword(b"ls"), tlv.generic(b"ok.txt")],  # a keyword as a path component
        [tlv.component(0x30, b"ok.txt")],  # another component type
        [tlv.generic(b"ok.txt"), tlv.keyword(b"ls")],  # 32=ls of a file
        [tlv.generic(b"missing.txt")],
    ],
    ids=[
        "dotdot",
        "dotdot-path",
        "sub-dotdot",
        "dot",
        "empty",
        "encoded-slash",
        "absolute",
        "nul",
        "symlink-file-out",
        "symlink-dir-out",
        "long-component",
        "long-path",
        "keyword",
        "other-type",
        "ls-of-file",
        "missing",
    ],
)
def test_hostile_metadata_request_is_refused(hostile, rel):
    prefix, face = hostile
    with pytest.raises(NotFoundError, match="the producer says"):
        ask(face, prefix, rel)


def test_segment_requests_outside_the_root_are_refused(hostile):
    prefix, face = hostile
    for rel in (
        [tlv.generic(b".."), tlv.generic(b"outside"), tlv.generic(b"secret.txt")],
        [tlv.generic(b"link-out.txt")],
        [],  # the root directory itself has no segments
    ):
        name = b"".join(from_uri(prefix) + rel) + tlv.version(1) + tlv.segment(0)
        with pytest.raises(NotFoundError):
            fetch_one(face, name, can_be_prefix=False, fresh=False)


def test_wrong_version_is_refused(hostile, serve):
    prefix, face = hostile
    name = b"".join(from_uri(prefix)) + tlv.generic(b"ok.txt") + tlv.version(12345)
    with pytest.raises(NotFoundError, match="version 12345 is gone"):
        fetch_one(face, name + tlv.segment(0), can_be_prefix=False, fresh=False)


def test_symlink_inside_the_root_is_served(hostile):
    prefix, face = hostile
    target = ask(face, prefix, [tlv.generic(b"sub"), tlv.generic(b"link-in.txt")])
    assert target.size == 4 and not target.is_listing


def test_secret_never_leaves_in_any_answer(hostile):
    prefix, face = hostile
    for rel in ([tlv.generic(b"link-out.txt")], [tlv.generic(b"dir-out")]):
        with pytest.raises(NotFoundError) as info:
            ask(face, prefix, rel)
        assert SECRET.decode() not in str(info.value)
