"""The files rows of an optimistic write: the compiled builder (catalog/ndnsci_catalog/_prepare.c)
against Python's.

When a batch's names are all new (``ingest.publish`` on SQLite, a first load), the server makes
every ``files`` row at once: the batch's row, then its id, ``packed`` (``bulk.HEAD`` of id, seq
and the time codes, the facet value ids, the site's), seq, stamp and site. ``ingest._new_rows``
takes the compiled builder when ndnsci was built with it and ``ingest._new_rows_python`` for
what the compiled one declines. Both must give the same rows for real archives' names, and the
catalog the same tables either way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from sqlalchemy import text

from ndnsci_catalog import bulk, ingest
from ndnsci_catalog._prepare import new_rows as compiled
from ndnsci_catalog.records import parse_record

from . import consistency
from .corpus import all_records, many_records

STAMP = "2026-11-28T12:00:00.000000Z"


def prepared(count: int = 2_000) -> ingest.Prepared:
    records = [parse_record(r) for r in [*all_records(), *many_records(count)]]
    return ingest.prepare(records)


def facet_ids_of(batch: ingest.Prepared) -> bytes:
    ids = np.arange(7, 7 + len(batch.values), dtype="<i4")  # value ids as the catalog has them
    return ids[np.frombuffer(batch.refs, dtype="<i4")].tobytes()


def both(batch: ingest.Prepared, site_ref: bytes, site: str | None, **at: int) -> list[Any]:
    first_id, first_seq = at.get("first_id", 1), at.get("first_seq", 1)
    facet_ids = facet_ids_of(batch)
    made = compiled(
        batch.rows, batch.codes, facet_ids, batch.offsets, site_ref, first_id, first_seq,
        STAMP, site,
    )  # fmt: skip
    expected = ingest._new_rows_python(
        batch, facet_ids, site_ref, first_id=first_id, first_seq=first_seq, stamp=STAMP, site=site
    )
    assert made == expected
    return expected


@pytest.mark.parametrize(("site_ref", "site"), [(b"\x05\x00\x00\x00", "ncar"), (b"", None)])
def test_real_archive_names_give_the_same_rows(site_ref, site):
    batch = prepared()
    rows = both(batch, site_ref, site, first_id=41, first_seq=1_000)
    assert len(rows) == len(batch.rows)
    width = len(bulk.RECORD_COLUMNS)
    for k, row in enumerate(rows):
        assert row[:width] == batch.rows[k]
        file_id, packed, seq, stamp, row_site = row[width:]
        assert (file_id, seq, stamp, row_site) == (41 + k, 1_000 + k, STAMP, site)
        # what the search reads back from packed: the head, then the facet value ids
        assert bulk.HEAD.unpack(packed[: bulk.HEAD.size]) == (file_id, seq, *batch.codes[k])
        ids = bulk.unpack_ids(packed)
        count = batch.offsets[k + 1] - batch.offsets[k]
        assert len(ids) == count + (1 if site_ref else 0)
        if site_ref:
            assert ids[-1] == 5


def test_an_empty_batch_and_large_ids():
    empty = ingest.prepare([])
    assert both(empty, b"", None) == []
    batch = prepared(10)
    rows = both(batch, b"", None, first_id=2**40, first_seq=2**45)
    assert rows[-1][len(bulk.RECORD_COLUMNS)] == 2**40 + len(batch.rows) - 1


def _declined(batch: ingest.Prepared) -> list[tuple[Any, ...]]:
    """Arguments the compiled builder does not take: each one's reason."""
    facet_ids = facet_ids_of(batch)
    plain = [batch.rows, batch.codes, facet_ids, batch.offsets, b"", 1, 1, STAMP, None]

    def but(index: int, value: Any) -> tuple[Any, ...]:
        return tuple(value if i == index else a for i, a in enumerate(plain))

    codes_list = [list(c) for c in batch.codes]
    float_code = [(*c[:2], float(c[2])) for c in batch.codes]
    huge_code = [(*c[:2], 2**70) for c in batch.codes]
    return [
        but(0, [list(r) for r in batch.rows]),  # a row that is not a tuple
        but(1, codes_list),  # codes that are not tuples
        but(1, float_code),  # a time code that is not an int
        but(1, huge_code),  # a code beyond 64 bits
        but(1, batch.codes[:-1]),  # a row without its codes
        but(3, batch.offsets[:-1]),  # offsets one short
        but(3, [0, *[o + 10**6 for o in batch.offsets[1:]]]),  # past the facet ids
        but(3, [0, batch.offsets[2], batch.offsets[1], *batch.offsets[3:]]),  # going back
        but(5, 2**62),  # ids that would pass 2**62
        but(6, -1),  # a negative seq
    ]


def test_what_the_compiled_builder_declines_goes_to_python():
    batch = prepared(20)
    for arguments in _declined(batch):
        assert compiled(*arguments) is None
    # from the caller's side: the same rows either way
    facet_ids = facet_ids_of(batch)
    odd = ingest.Prepared(**{**_fields(batch), "codes": [list(c) for c in batch.codes]})
    rows = ingest._new_rows(odd, facet_ids, b"", first_id=3, first_seq=9, stamp=STAMP, site=None)
    assert rows == both(batch, b"", None, first_id=3, first_seq=9)


def test_wrong_argument_types_raise():
    batch = prepared(5)
    with pytest.raises(TypeError):
        compiled(tuple(batch.rows), batch.codes, b"", batch.offsets, b"", 1, 1, STAMP, None)
    with pytest.raises(TypeError):
        compiled(batch.rows, batch.codes, "ids", batch.offsets, b"", 1, 1, STAMP, None)


def _fields(batch: ingest.Prepared) -> dict[str, Any]:
    return {name: getattr(batch, name) for name in ingest.Prepared.__slots__}


def test_a_first_load_writes_the_same_tables_either_way(monkeypatch, tmp_path):
    """The whole optimistic write on SQLite, with the compiled rows and with Python's."""
    from ndnsci_catalog.database import make_engine, make_sessionmaker
    from ndnsci_catalog.migrate import upgrade

    records = [parse_record(r) for r in [*all_records(), *many_records(300)]]
    tables = []
    calls: list[int] = []

    def spy(rows: list[Any], *rest: Any) -> Any:
        calls.append(len(rows))
        return compiled(rows, *rest)

    for compiled_rows in (spy, None):
        monkeypatch.setattr(ingest, "_compiled_new_rows", compiled_rows)
        url = f"sqlite:///{tmp_path}/{'c' if compiled_rows else 'python'}.db"
        upgrade(url)
        engine = make_engine(url)
        with make_sessionmaker(engine)() as session:
            half = len(records) // 2
            for part in (records[:half], records[half:]):
                result = ingest.publish(session, part)
                assert result.inserted == len(part)
                session.commit()
            assert consistency.check(session) == len(records)
            tables.append(
                [
                    session.execute(text(f"SELECT {columns} FROM {table} ORDER BY 1")).all()
                    for table, columns in (
                        ("files", "id, name, seq, packed, site, facets, size"),
                        ("changes", "seq, op, name, version, file_id, site"),
                        ("tree_nodes", "parent, component, files, leaves"),
                        ("catalog_state", "last_seq, files, bytes"),
                    )
                ]
            )
        engine.dispose()
    assert tables[0] == tables[1]
    assert len(tables[0][0]) == len(records)
    assert sum(calls) == len(records)  # both batches were written without a lookup


# slow (--durations): two fresh interpreters importing the catalog, as the switch is read at import
def test_ndnsci_hotloop_python_switches_the_compiled_rows_off():
    code = "from ndnsci_catalog import ingest; print(ingest._compiled_new_rows is None)"
    for setting, expected in (("python", "True"), ("c", "False")):
        env = {**os.environ, "NDNSCI_HOTLOOP": setting}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == expected
