"""bench/names.py, the realistic name generator (issue 28), checked against the corpora at 100k.

The generator draws datasets (bench/names.py, "The model"); its dataset-level facets are drawn
from the corpus's per-dataset distributions, so the checks are made over generated datasets:

- cardinality: the distinct values of each facet drawn directly, within 3 standard deviations
  (and at least 2 values) of what ``d`` draws from the corpus's distribution predict;
- top-5 shares of model, experiment, table (and CMS area, primary dataset), and the top-5
  variables of the commonest table over its (dataset, variable) pairs: within 3 binomial
  standard deviations (and at least 0.01) of the corpus's share;
- the seed fixes the stream; every name translates with ndnsci_translators to the same name and
  facets, without correction; no name is repeated; datasets drawn twice are counted.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))

from bench import names
from ndnsci_translators import translate

N = 100_000
SEED = 28
#: facets that identify a generated dataset (all but the variable, version and time range)
DATASET = {
    "cmip5": ["product", "institute", "model", "experiment", "frequency", "realm", "table",
              "ensemble", "version"],
    "cmip6": ["activity_id", "institution_id", "source_id", "experiment_id", "member_id",
              "table_id", "grid_label", "version"],
    "cms": ["area", "era", "primary_dataset", "tier", "processing"],
}  # fmt: skip
#: the generator's facet names -> the records' facet keys, per scheme
KEY = {"cmip5": {"model": "model", "table": "table", "version": "version",
                 "experiment": "experiment"},
       "cmip6": {"model": "source_id", "table": "table_id", "version": "version",
                 "experiment": "experiment_id"},
       "cms": {"area": "area", "primary_dataset": "primary_dataset"}}  # fmt: skip


@pytest.fixture(scope="module")
def generated() -> tuple[list[dict[str, Any]], names.Stats]:
    stats = names.Stats()
    return list(names.records(N, SEED, stats=stats)), stats


def datasets(recs: list[dict[str, Any]], scheme: str) -> list[dict[str, str]]:
    seen: dict[tuple[str, ...], dict[str, str]] = {}
    for r in recs:
        if r["scheme"] == scheme:
            seen.setdefault(tuple(r["facets"][k] for k in DATASET[scheme]), r["facets"])
    return list(seen.values())


def model_of(scheme: str) -> Any:
    return names.GENERATORS[scheme][1]()


def test_the_same_seed_gives_the_same_names_and_another_seed_others() -> None:
    first = [r["name"] for r in itertools.islice(names.records(5000, seed=3), 5000)]
    again = [r["name"] for r in names.records(5000, seed=3)]
    other = [r["name"] for r in names.records(5000, seed=4)]
    assert first == again
    assert len(first) == 5000
    assert first != other


def test_every_name_translates_to_itself_without_correction(generated: Any) -> None:
    recs, _ = generated
    failures = []
    for r in recs:
        t = translate(r["input"])
        if not t.ok or t.name != r["name"] or t.corrections or dict(t.facets) != r["facets"]:
            failures.append((r["input"], t.error, t.name, t.corrections))
    assert failures[:5] == []


def test_no_name_is_repeated_and_datasets_drawn_twice_are_counted(generated: Any) -> None:
    recs, stats = generated
    assert len(recs) == N
    assert len({r["name"] for r in recs}) == N
    drawn = sum(stats.datasets.values())
    print(f"datasets {dict(stats.datasets)}; drawn twice and skipped: {stats.duplicates}")
    assert stats.duplicates < 0.1 * drawn
    assert sum(stats.files.values()) == N


def test_the_schemes_are_mixed_in_the_stated_proportions(generated: Any) -> None:
    recs, _ = generated
    counts = Counter(r["scheme"] for r in recs)
    for scheme, share in names.DEFAULT_MIX.items():
        assert abs(counts[scheme] / N - share) < 0.01, counts
    only = Counter(r["scheme"] for r in names.records(2000, mix={"cms": 1}))
    assert only == {"cms": 2000}


@pytest.mark.parametrize("scheme", ["cmip5", "cmip6", "cms"])
def test_facet_cardinality_is_what_the_corpus_predicts(generated: Any, scheme: str) -> None:
    recs, stats = generated
    sets = datasets(recs, scheme)
    # a dataset's second version counts as one more here
    assert stats.datasets[scheme] <= len(sets) <= 1.05 * stats.datasets[scheme]
    draws = len(sets) + stats.duplicates  # the skipped draws took values too (an upper bound)
    for facet, dist in model_of(scheme).facet_dists().items():
        got = len({d[KEY[scheme][facet]] for d in sets})
        low, high = len(sets), draws
        expected_low = names.expected_cardinality(dist, low)
        expected_high = names.expected_cardinality(dist, high)
        sd = math.sqrt(sum((1 - p) ** low * (1 - (1 - p) ** low) for p in dist.shares().values()))
        tolerance = max(2.0, 3 * sd)
        print(f"{scheme} {facet}: {got} distinct in {len(sets)} datasets, predicted "
              f"{expected_low:.1f} (corpus: {len(dist)})")  # fmt: skip
        assert expected_low - tolerance <= got <= expected_high + tolerance, facet


def _check_shares(label: str, got: Counter[str], total: int, corpus: dict[str, float]) -> None:
    for value, share in sorted(corpus.items(), key=lambda kv: -kv[1])[:5]:
        tolerance = max(0.01, 3 * math.sqrt(share * (1 - share) / total))
        print(f"{label} {value}: {got[value] / total:.3f} (corpus {share:.3f} +- {tolerance:.3f})")
        assert abs(got[value] / total - share) <= tolerance, (label, value)


@pytest.mark.parametrize("scheme", ["cmip5", "cmip6"])
def test_the_top_shares_of_models_experiments_tables_and_variables(
    generated: Any, scheme: str
) -> None:
    recs, _ = generated
    sets = datasets(recs, scheme)
    m = model_of(scheme)
    for facet, dist in [("model", m.models), ("experiment", m.experiments), ("table", m.tables)]:
        got = Counter(d[KEY[scheme][facet]] for d in sets)
        _check_shares(f"{scheme} {facet}", got, len(sets), dist.shares())
    # the variables of the commonest table, over its (dataset, variable) pairs
    table = m.tables.values[0]
    key = KEY[scheme]["table"]
    variable = "variable" if scheme == "cmip5" else "variable_id"
    pairs = {(tuple(r["facets"][k] for k in DATASET[scheme]), r["facets"][variable])
             for r in recs if r["scheme"] == scheme and r["facets"][key] == table}  # fmt: skip
    got = Counter(v for _, v in pairs)
    vocab = m.variables_of[table]
    weight = sum(p for _, p in vocab)
    _check_shares(f"{scheme} {table} variable", got, len(pairs), {v: p / weight for v, p in vocab})
    print(f"{scheme} models: Zipf exponent {names.fitted_zipf(m.models):.2f}")


def test_the_top_shares_of_cms_areas_and_primary_datasets(generated: Any) -> None:
    recs, _ = generated
    sets = datasets(recs, "cms")
    m = names.cms_model()
    got_area = Counter(d["area"] for d in sets)
    _check_shares("cms area", got_area, len(sets), m.areas.shares())
    got_primary = Counter(d["primary_dataset"] for d in sets)
    _check_shares("cms primary dataset", got_primary, len(sets), m.primaries.shares())


def test_a_dataset_is_its_variables_by_time_chunks_and_rarely_has_two_versions(
    generated: Any,
) -> None:
    recs, _ = generated
    by: dict[tuple[str, ...], set[str]] = defaultdict(set)
    chunks: dict[tuple[str, ...], set[str | None]] = defaultdict(set)
    for r in recs:
        if r["scheme"] == "cmip5":
            f = r["facets"]
            atomic = (*tuple(f[k] for k in DATASET["cmip5"] if k != "version"), f["variable"])
            by[atomic].add(f["version"])
            chunks[(*atomic, f["version"])].add(f["time_range"])
    several = sum(len(v) > 1 for v in by.values()) / len(by)
    assert several < 0.05
    # the chunks of a variable are contiguous: each starts the year after the previous ends
    for times in chunks.values():
        ranges = sorted(t for t in times if t)
        for a, b in itertools.pairwise(ranges):
            assert int(b[:4]) == int(a.split("-")[1][:4]) + 1, (a, b)


def test_a_second_version_never_repeats_another_datasets_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # every dataset with two versions: a later version of one dataset must not be a version
    # another dataset has (bench/catalog.py's 100k once published 4 collisions, issue 28)
    for scheme in ("cmip5", "cmip6"):
        monkeypatch.setattr(model_of(scheme), "second_version", 1.0)
    stats = names.Stats()
    recs = [r["name"] for r in names.records(30_000, seed=100_000, stats=stats)]
    assert len(set(recs)) == len(recs)
    print(f"duplicate datasets skipped: {stats.duplicates}")
