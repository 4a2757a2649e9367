"""A publish's tree count deltas: the compiled walk (ndnsci_catalog/_prepare.c) against Python's.

``ingest._tree_rows`` takes the compiled walk when ndnsci was built with it and falls back to
``ingest._tree_python`` for what the compiled one declines (non-ASCII paths, huge counts, paths
not from the root). Both must give the same rows, in the same order, for real archives' names
and for path sets made to hit the walk's corners: prefixes, empty components, ``-`` and ``.``
sorting before ``/``, removals and counts that cancel.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter

import pytest

from ndnsci_catalog import ingest
from ndnsci_catalog._prepare import tree_rows as compiled
from tests.catalog.corpus import all_records, many_records


def parents_of(names: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in names:
        parent = name.rpartition("/")[0]
        counts[parent] = counts.get(parent, 0) + 1
    return counts


def test_the_rows_of_a_small_tree_are_what_a_person_counts():
    parents = {"/A/x": 2, "/A/x/y": 1, "/A-B": 1, "/B/z": -1}
    assert compiled(parents) == [
        # "/A-B/" sorts before "/A/": '-' before '/'
        ("", "A-B", 1, 1),
        ("", "A", 3, 0),
        ("/A", "x", 3, 2),
        ("/A/x", "y", 1, 1),
        ("", "B", -1, 0),
        ("/B", "z", -1, -1),
    ]
    assert ingest._tree_python(parents) == compiled(parents)


def test_nodes_whose_count_cancels_out_are_left_out():
    # files added under one child and removed under another: the parent's count is unchanged
    parents = {"/A/x": 2, "/A/y": -2}
    assert compiled(parents) == [("/A", "x", 2, 2), ("/A", "y", -2, -2)]
    assert compiled({"/A/x": 0}) == []
    assert compiled({}) == []


@pytest.mark.parametrize("count", [60, 2_000])
def test_real_archive_names_give_the_same_rows(count):
    names = [r["name"] for r in all_records()] + [r["name"] for r in many_records(count)]
    parents = parents_of(names)
    rows = compiled(parents)
    assert rows == ingest._tree_python(parents)
    # the root nodes count every file once
    roots = {component: files for parent, component, files, _ in rows if parent == ""}
    assert sum(roots.values()) == len(names)


def test_random_path_sets_give_the_same_rows():
    rng = random.Random(14)
    # components chosen to sort around "/" ('-' and '.' before it, '_' and letters after)
    alphabet = ["a", "b", "a-b", "a.b", "a_b", "", "A", "~", "0", "ab", "a-", "-"]
    for _ in range(4_000):
        parents: dict[str, int] = {}
        for _ in range(rng.randint(0, 40)):
            depth = rng.randint(1, 7)
            path = "/" + "/".join(rng.choice(alphabet) for _ in range(depth))
            parents[path] = rng.choice([-3, -1, 0, 1, 1, 2, 7])
        assert compiled(parents) == ingest._tree_python(parents), parents


def test_a_counter_with_removals_as_the_write_makes_them():
    known: Counter[str] = Counter()
    for name in ("/C/d/e/f.nc", "/C/d/g.nc", "/C/h/i.nc"):
        known[name.rpartition("/")[0]] -= 1
    assert compiled(known) == ingest._tree_python(known)
    assert compiled(known)[0] == ("", "C", -3, 0)


@pytest.mark.parametrize(
    "parents",
    [
        {"/CMIP5/m\u00e9t\u00e9o": 1, "/CMIP5/a": 1},  # not ASCII
        {"/A/b": 1 << 40},  # a count far beyond a batch's
        {"A/b": 1},  # not from the root
        {"": 1},
    ],
)
def test_what_the_compiled_walk_declines_goes_to_python(parents):
    assert compiled(parents) is None
    try:
        expected = ingest._tree_python(parents)
    except IndexError:  # a path "": Python's own answer, kept
        with pytest.raises(IndexError):
            ingest._tree_rows(parents)
        return
    assert ingest._tree_rows(parents) == expected


def test_a_mapping_that_is_not_a_dict_goes_to_python():
    class Paths(dict[str, int]):
        pass

    assert compiled(Paths({"/A/b": 1})) == [("", "A", 1, 0), ("/A", "b", 1, 1)]
    assert compiled(list({"/A/b": 1}.items())) is None  # type: ignore[arg-type]


def test_a_deep_long_path():
    path = "/" + "/".join(f"component{i:04d}" * 3 for i in range(300))
    parents = {path: 3, path.rpartition("/")[0]: -1}
    rows = compiled(parents)
    assert rows == ingest._tree_python(parents)
    assert len(rows) == 300


def test_prepare_uses_the_compiled_walk_when_built(monkeypatch):
    calls = []

    def spy(parents):
        calls.append(len(parents))
        return compiled(parents)

    monkeypatch.setattr(ingest, "_compiled_tree_rows", spy)
    assert ingest._tree_rows({"/A/b": 1}) == [("", "A", 1, 0), ("/A", "b", 1, 1)]
    assert calls == [1]
    monkeypatch.setattr(ingest, "_compiled_tree_rows", None)
    assert ingest._tree_rows({"/A/b": 1}) == [("", "A", 1, 0), ("/A", "b", 1, 1)]
    assert calls == [1]


# slow (--durations): two fresh interpreters importing the catalog, as the switch is read at import
def test_ndnsci_hotloop_python_switches_the_compiled_walk_off():
    code = "from ndnsci_catalog import ingest; print(ingest._compiled_tree_rows is None)"
    for setting, expected in (("python", "True"), ("c", "False")):
        env = {**os.environ, "NDNSCI_HOTLOOP": setting}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == expected
