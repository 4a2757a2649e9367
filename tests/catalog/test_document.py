"""The free-text document of a record: the compiled builder (ndnsci_catalog/_prepare.c) against
``fulltext.document``.

A published row's document is made again to remove it from the SQLite table (which keeps no copy
of it: ``ingest._old_document``), by Python; so the compiled one must give exactly Python's text,
or decline (None) and leave it to Python: a name with escapes or an all-period component, text
that is not ASCII, a record with too many sources.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from ndnsci_catalog import fulltext, ingest
from ndnsci_catalog._prepare import document as compiled
from ndnsci_catalog.records import PublishRecord, parse_record

from .corpus import all_records, many_records


def python(name: str, facets: dict[str, str | None], original: str | None, path: str | None):
    components = PublishRecord(
        name, "x", None, "", None, {}, [], None, None, None, None, None, None, None
    ).components
    return fulltext.document(components, facets, None, original, path)


def test_real_archive_records_give_the_same_document():
    records = [parse_record(r) for r in [*all_records(), *many_records(3_000)]]
    expected = [
        fulltext.document(r.components, r.facets, r.metadata, r.original, r.original_path)
        for r in records
    ]
    assert [compiled(r.name, r.facets, r.original, r.original_path) for r in records] == expected
    assert [ingest._document(r) for r in records] == expected  # what prepare takes


def test_a_small_record_as_a_person_reads_it():
    facets = {"model": "MPI-ESM-LR", "variable": "tas", "geo": None, "ensemble": "r1i1p1"}
    made = compiled(
        "/CMIP5/output1/MPI-M/MPI-ESM-LR/tas/tas_Amon_MPI-ESM-LR_r1i1p1.nc",
        facets,
        "tas_Amon_MPI-ESM-LR_r1i1p1.NC",
        "data//Amon/tas_Amon_MPI-ESM-LR_r1i1p1.NC",
    )
    # each source once (the repeated "MPI-ESM-LR" and "tas" strings), then its tokens
    assert made == (
        "cmip5 output1 mpi m mpi esm lr tas tas amon mpi esm lr r1i1p1 nc r1i1p1 "
        "tas amon mpi esm lr r1i1p1 nc data amon"
    )
    assert made == python(
        "/CMIP5/output1/MPI-M/MPI-ESM-LR/tas/tas_Amon_MPI-ESM-LR_r1i1p1.nc",
        facets,
        "tas_Amon_MPI-ESM-LR_r1i1p1.NC",
        "data//Amon/tas_Amon_MPI-ESM-LR_r1i1p1.NC",
    )


def test_random_text_gives_the_same_document():
    rng = random.Random(28)
    pieces = ["a", "B", "z9", "_", "-", ".", "~", " ", "Tas", "0", "x_y", "", "AB-cd", "\t", "!"]

    def text(most: int = 6) -> str:
        return "".join(rng.choice(pieces) for _ in range(rng.randint(0, most)))

    for _ in range(3_000):
        name = "/" + "/".join(text() or "c" for _ in range(rng.randint(1, 8)))
        name = name.replace("/.", "/x")  # an all-period component is escaped: declined below
        facets = {f"k{i}": rng.choice([None, text(), name.split("/")[-1]]) for i in range(5)}
        facets = {k: v for k, v in facets.items() if v != ""}
        original = rng.choice([None, "", text(), name.rpartition("/")[2]])
        path = rng.choice([None, "", "/".join(text() for _ in range(rng.randint(1, 5)))])
        assert compiled(name, facets, original, path) == python(name, facets, original, path)


def test_a_document_keeps_its_first_tokens():
    facets = {f"k{i}": f"w{i} " * 30 for i in range(100)}  # 3,000 tokens
    made = compiled("/A/b", facets, None, None)
    assert made == python("/A/b", facets, None, None)
    assert len(made.split()) == fulltext.MAX_TOKENS


@pytest.mark.parametrize(
    ("name", "facets", "original", "path"),
    [
        ("/CMIP5/m%C3%A9t%C3%A9o/a.nc", {}, None, None),  # escaped: Python unescapes it
        ("/CMIP5/.../a.nc", {}, None, None),  # an all-period component
        ("/CMIP5/a.nc", {"model": "m\u00e9t\u00e9o"}, None, None),  # not ASCII
        ("/CMIP5/a.nc", {}, "\u00e9t\u00e9.nc", None),
        ("/CMIP5/a.nc", {}, None, "d\u00e9j\u00e0/a.nc"),
        ("/CMIP5/a.nc", {f"k{i}": f"v{i}" for i in range(300)}, None, None),  # many sources
    ],
)
def test_what_the_compiled_builder_declines_goes_to_python(name, facets, original, path):
    assert compiled(name, facets, original, path) is None
    r = PublishRecord(name, "x", None, original or "", path, facets, [], None, *[None] * 6)
    assert ingest._document(r) == python(name, facets, original, path)


def test_odd_arguments_are_declined_not_misread():
    assert compiled("CMIP5/a.nc", {}, None, None) is None  # not from the root
    assert compiled("", {}, None, None) is None
    assert compiled("/A/b", [("k", "v")], None, None) is None  # not a dict
    assert compiled("/A/b", {"k": 5}, None, None) is None  # a value that is not text
    assert compiled("/A/b", {}, b"a", None) is None


def test_a_record_with_metadata_is_made_by_python(monkeypatch):
    calls = []

    def spy(*args):
        calls.append(args[0])
        return compiled(*args)

    monkeypatch.setattr(ingest, "_compiled_document", spy)
    plain = PublishRecord("/A/b.nc", "x", None, "b.nc", None, {}, [], None, *[None] * 6)
    rich = PublishRecord(
        "/A/c.nc", "x", None, "c.nc", None, {}, [], {"title": "Surface Air"}, *[None] * 6
    )
    assert ingest._document(plain) == "a b nc"
    assert ingest._document(rich) == "a c nc surface air"
    assert calls == ["/A/b.nc"]


# slow (--durations): two fresh interpreters importing the catalog, as the switch is read at import
def test_ndnsci_hotloop_python_switches_the_compiled_document_off():
    code = "from ndnsci_catalog import ingest; print(ingest._compiled_document is None)"
    for setting, expected in (("python", "True"), ("c", "False")):
        env = {**os.environ, "NDNSCI_HOTLOOP": setting}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == expected
