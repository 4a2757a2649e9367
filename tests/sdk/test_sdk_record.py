"""ndnsci.base.record.Fields behaves as the typing.NamedTuple it stands in for at run time, and
Protocol as far as a transport or a progress display uses it (DEVELOPERS.md "Start-up budget")."""

from __future__ import annotations

import copy
import pickle
from typing import NamedTuple

import pytest

from ndnsci.base.environment import Settings
from ndnsci.base.record import Fields, Protocol
from ndnsci.ndn.keys import PublisherKey
from ndnsci.ndn.rdr import Metadata
from ndnsci.ndn.tlv import DataPacket, InterestPacket, LpFrame
from ndnsci.sdk.manifest import ManifestEntry
from ndnsci.sdk.transports import FetchOptions, Job, Transport


class Mine(Fields):  # the run-time class, as the fetch path declares them
    """A record."""

    number: int
    data: bytes = b""
    note: str | None = None

    @property
    def double(self) -> int:
        return 2 * self.number


class Theirs(NamedTuple):
    """A record."""

    number: int
    data: bytes = b""
    note: str | None = None

    @property
    def double(self) -> int:
        return 2 * self.number


def _outcome(call):
    try:
        value = call()
    except Exception as exc:  # the kind of failure is what is compared
        return type(exc)
    return ("record", tuple(value)) if isinstance(value, Mine | Theirs) else value


CALLS = [
    lambda C: C(1),
    lambda C: C(1, b"x"),
    lambda C: C(1, b"x", "n"),
    lambda C: C(number=1, note="n"),
    lambda C: C(1, note="n"),
    lambda C: C(note="n", data=b"d", number=3),
    lambda C: C(),
    lambda C: C(data=b"x"),
    lambda C: C(1, 2, 3, 4),
    lambda C: C(1, number=2),
    lambda C: C(1, other=2),
    lambda C: C._make([1, b"y", None]),
    lambda C: C._make([1]),
    lambda C: C._make(iter([5, b"", "z"])),
    lambda C: C(1)._replace(data=b"r"),
    lambda C: C(1)._replace(other=2),
    lambda C: C(1)._asdict(),
    lambda C: C._fields,
    lambda C: C._field_defaults,
    lambda C: C.__match_args__,
    lambda C: repr(C(1, b"\x00", "n")).replace(C.__name__, "X"),
    lambda C: C(4).double,
    lambda C: C(4)[0],
    lambda C: C(4, b"q")[-1],
    lambda C: C(4)[:2],
    lambda C: len(C(4)),
    lambda C: C(1, b"a") == (1, b"a", None),
    lambda C: C(1, b"a") == C(1, b"a"),
    lambda C: C(1) < C(2),
    lambda C: hash(C(1, b"a")) == hash((1, b"a", None)),
    lambda C: list(C(7)),
    lambda C: C(7) + (1,),  # noqa: RUF005 - the concatenation is what is compared
    lambda C: isinstance(C(7), tuple),
    lambda C: setattr(C(1), "number", 2),
    lambda C: setattr(C(1), "other", 2),
    lambda C: hasattr(C(1), "__dict__"),
    lambda C: C.number.__doc__,
    lambda C: C.__doc__,
]


@pytest.mark.parametrize("call", range(len(CALLS)))
def test_a_record_answers_as_a_namedtuple(call: int) -> None:
    assert _outcome(lambda: CALLS[call](Mine)) == _outcome(lambda: CALLS[call](Theirs))


def test_unpacking_matching_copying_and_pickling() -> None:
    record = Mine(3, b"d")
    number, data, note = record
    assert (number, data, note) == (3, b"d", None)
    match record:
        case Mine(n, d, None):
            assert (n, d) == (3, b"d")
        case _:
            pytest.fail("no match")
    assert copy.copy(record) == record and copy.deepcopy(record) == record
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(record, protocol))
        assert type(again) is Mine and again == record
    # as a NamedTuple's: a subclass of a record adds no fields
    for base in (Mine, Theirs):
        sub = type("Sub", (base,), {"__annotations__": {"extra": "int"}})
        assert sub._fields == base._fields and sub(1).number == 1
        assert (
            hasattr(sub(1), "__dict__")
            and repr(sub(1, b"")) == "Sub(number=1, data=b'', note=None)"
        )


def test_a_record_refuses_what_a_namedtuple_refuses() -> None:
    with pytest.raises(TypeError, match="Non-default"):

        class Bad(Fields):
            first: int = 0
            second: int

    with pytest.raises(ValueError, match="underscore"):

        class Worse(Fields):
            _hidden: int


def test_the_fetch_paths_records() -> None:
    options = FetchOptions()
    assert options._replace(window=16).window == 16 and options.cc == "aimd"
    assert FetchOptions._fields[:2] == ("cc", "window") and options._asdict()["window"] == 64
    assert pickle.loads(pickle.dumps(options)) == options
    assert ManifestEntry("/a/b", "a/b")._replace(size=3) == ("/a/b", "a/b", 3, None, None)
    assert LpFrame(1, 2) == (1, 2, None, None, 0)
    assert InterestPacket(b"n", True, False, None, 4000).can_be_prefix
    assert Metadata(b"v").sha256_pending is False
    assert "signature_value" in DataPacket._fields
    assert PublisherKey("k", b"pem").name == "k"
    assert len(Settings._fields) == len(Settings.__annotations__)
    assert Job._fields == (
        "name", "part", "state", "resume", "options", "progress", "stop", "settled",
    )  # fmt: skip


def test_a_protocol_is_a_base_not_an_object() -> None:
    with pytest.raises(TypeError, match="protocol"):
        Transport()

    class Mine(Transport):
        name = "mine"

    assert isinstance(Mine(), Transport) and isinstance(Mine(), Protocol)
    assert Transport.receive.__doc__ and "job.part" in Transport.receive.__doc__
