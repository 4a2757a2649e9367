"""What callers rely on of the fetch path's types: the mutable records are dataclasses (their
constructors as they always were), the immutable ones NamedTuples, the contracts Protocols."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from ndnsci.ndn.consumer import Target
from ndnsci.sdk.manifest import ManifestEntry
from ndnsci.sdk.progress import NoProgress, Progress
from ndnsci.sdk.report import FetchReport, Outcome
from ndnsci.sdk.transports import FetchOptions, Received, Transport


def test_an_outcome_takes_its_fields_in_order_with_their_defaults() -> None:
    done = Outcome("/a/b", "out/b", "done", None, 3, 0.5)
    assert (done.name, done.path, done.status, done.size, done.seconds) == (
        "/a/b", "out/b", "done", 3, 0.5,
    )  # fmt: skip
    assert (done.attempts, done.sha256, done.checksum, done.nacks, done.warnings) == (
        0, "", "", 0, [],
    )  # fmt: skip
    assert done.ok and done.mbps == 3 / 0.5 / 1e6
    other = Outcome("/a/c", "out/c", "failed")
    other.warnings.append("one")
    assert done.warnings == []  # each its own list
    assert Outcome("/a/b", "p", "done", warnings=None).warnings == []  # as the constructor took


def test_records_compare_by_value_show_their_fields_and_have_no_hash() -> None:
    assert Outcome("/a", "a", "done") == Outcome("/a", "a", "done")
    assert Outcome("/a", "a", "done") != Outcome("/a", "a", "failed")
    assert repr(Outcome("/a", "a", "done")).startswith("Outcome(name='/a', path='a', status=")
    report = FetchReport([Outcome("/a", "a", "done", size=5)], 1.0)
    assert report == FetchReport([Outcome("/a", "a", "done", size=5)], 1.0, False)
    assert report.bytes == 5 and report.ok and not report.interrupted
    received = Received(10, None, "digest")
    assert received == Received(10, None, "digest", 0, 0, 0, 0, 0, 0, 0, [], False)
    target = Target(b"v", 0, 10, 10, None, False, "none", False, b"m")
    assert target == dataclasses.replace(target)
    for record in (Outcome("/a", "a", "done"), report, received, target):
        with pytest.raises(TypeError, match="unhashable"):
            hash(record)


def test_an_outcome_as_a_dict_is_a_copy_of_every_field() -> None:
    outcome = Outcome("/a", "a", "done", size=2_000_000, seconds=1.0, warnings=["w"])
    as_dict = outcome.to_dict()
    assert list(as_dict) == [f.name for f in dataclasses.fields(Outcome)] + ["mbps"]
    assert as_dict["mbps"] == 2.0 and as_dict["warnings"] == ["w"]
    as_dict["warnings"].append("x")
    assert outcome.warnings == ["w"]


def test_the_immutable_records_are_namedtuples() -> None:
    options = FetchOptions()
    assert options._replace(window=16).window == 16 and options.cc == "aimd"
    assert pickle.loads(pickle.dumps(options)) == options
    assert ManifestEntry("/a/b", "a/b")._replace(size=3) == ("/a/b", "a/b", 3, None, None)


def test_a_contract_is_a_base_a_transport_may_name_but_not_an_object() -> None:
    with pytest.raises(TypeError, match="Protocols cannot be instantiated"):
        Transport()  # type: ignore[misc]
    with pytest.raises(TypeError, match="Protocols cannot be instantiated"):
        Progress()  # type: ignore[misc]

    class Mine(Transport):
        name = "mine"

    assert isinstance(Mine(), Mine) and Transport in type(Mine()).__mro__
    assert Transport.receive.__doc__ and "job.part" in Transport.receive.__doc__
    shown: Progress = NoProgress()  # structural: no base needed
    shown.close()
