"""The cache-hit simulation: the policies behave as their definitions say, the workload is the
one described, and the study's JSON has the contract's shape."""

from __future__ import annotations

import pytest

from ndnsci.testbed import cachesim, experiments


def _hits(policy: str, capacity: int, keys: list[str]) -> list[bool]:
    cache = cachesim.make_cache(policy, capacity, seed=0)
    return [cache.lookup((ord(k), 0)) for k in keys]


def test_lru_fifo_lfu_differ_as_defined():
    # capacity 2: A B A C A -- LRU keeps A (just used), FIFO evicts A (first in)
    assert _hits("lru", 2, list("ABACA")) == [False, False, True, False, True]
    assert _hits("fifo", 2, list("ABACA")) == [False, False, True, False, False]
    # A A A B C B -- LFU keeps A (3 uses) and evicts B; LRU evicts A (least recent)
    assert _hits("lfu", 2, list("AAABCB")) == [False, True, True, False, False, False]
    assert _hits("lru", 2, list("AAABCB")) == [False, True, True, False, False, True]


def test_lfu_breaks_ties_by_recency():
    # B and C are used once each; D evicts the older of them (B), so C still hits
    assert _hits("lfu", 2, list("BCDC")) == [False, False, False, True]


def test_random_eviction_is_seeded_and_bounded():
    keys = [chr(65 + (i * 7) % 13) for i in range(200)]
    assert _hits("random", 4, keys) == _hits("random", 4, keys)
    cache = cachesim.make_cache("random", 4, seed=1)
    for k in keys:
        cache.lookup((ord(k), 0))
    assert isinstance(cache, cachesim.RandomEviction) and len(cache.keys) == 4


@pytest.mark.parametrize("policy", cachesim.POLICIES)
def test_capacity_zero_never_hits_and_a_big_cache_misses_only_once(policy):
    workload = cachesim.make_workload(
        [20_000, 50_000, 3_000], consumers=5, requests_per_consumer=4, segment_size=8000
    )
    assert cachesim.simulate(workload, policy, 0).hits == 0
    whole = cachesim.simulate(workload, policy, workload.catalog_segments)
    distinct = sum(workload.segments(f) for f in {r.file for r in workload.requests})
    assert whole.lookups - whole.hits == distinct  # cold misses only
    assert whole.lookups == workload.requested_segments


def test_unknown_policy():
    with pytest.raises(ValueError, match="unknown policy 'mru'"):
        cachesim.make_cache("mru", 4)


def test_lru_hit_ratio_never_falls_as_the_cache_grows():
    # LRU's inclusion property: a bigger LRU cache holds everything a smaller one does
    sizes = cachesim.make_catalog([80_000, 130_000, 400_000, 2_000_000], 30, seed=3)
    workload = cachesim.make_workload(sizes, consumers=10, requests_per_consumer=5, seed=3)
    ratios = [cachesim.simulate(workload, "lru", c).hit_ratio for c in range(0, 800, 50)]
    assert ratios == sorted(ratios)
    assert ratios[0] == 0 and ratios[-1] > 0.3


def test_zipf_weights():
    weights = cachesim.zipf_weights(10, 1.15)
    assert sum(weights) == pytest.approx(1.0)
    assert weights == sorted(weights, reverse=True)
    assert weights[0] / weights[1] == pytest.approx(2**1.15)


def test_workload_shape_and_determinism():
    sizes = cachesim.make_catalog([100, 200, 300], 12, seed=5)
    assert len(sizes) == 12 and set(sizes) <= {100, 200, 300}
    a = cachesim.make_workload(sizes, consumers=3, requests_per_consumer=4, seed=9)
    b = cachesim.make_workload(sizes, consumers=3, requests_per_consumer=4, seed=9)
    assert a == b
    assert len(a.requests) == 12
    assert [r.consumer for r in a.requests[:6]] == [0, 1, 2, 0, 1, 2]  # consumers take turns
    with pytest.raises(ValueError):
        cachesim.make_catalog([], 3)
    with pytest.raises(ValueError):
        cachesim.make_workload(sizes, consumers=0, requests_per_consumer=1)


def test_zipf_requests_favour_popular_files():
    sizes = [1000] * 20
    workload = cachesim.make_workload(sizes, consumers=50, requests_per_consumer=40, seed=2)
    counts = [0] * 20
    for r in workload.requests:
        counts[r.file] += 1
    top = sorted(counts, reverse=True)
    # rank 1 gets about 1/H(20, 1.15) ~ 31% of 2000 requests, rank 2 about 14%
    assert 0.26 < top[0] / 2000 < 0.36
    assert 0.10 < top[1] / 2000 < 0.18


def test_file_hits_count_whole_files_only():
    workload = cachesim.Workload(
        [16_000, 8_000], [cachesim.Request(0, 0)] * 2 + [cachesim.Request(0, 1)], 8000
    )
    outcome = cachesim.simulate(workload, "lru", 2)
    # file 0 (2 segments) twice: the second time both hit; file 1 misses
    assert (outcome.hits, outcome.lookups, outcome.file_hits, outcome.requests) == (2, 5, 1, 3)


def test_study_has_the_contract_shape():
    opts = experiments.Options.quick()
    result = experiments.simulate_study([82_000, 135_000, 1 << 20, 8 << 20], opts)
    assert set(result["simulated"]) == {"lru", "lfu", "fifo", "random"}
    for points in result["simulated"].values():
        assert set(points) == set(result["cache_sizes"])
        assert all(isinstance(v, float) and 0 <= v <= 1 for v in points.values())
    assert set(result["consumers"]["lru"]) == {str(k) for k in opts.consumers_sweep}
    assert set(result["files"]["lru"]) == {str(n) for n in opts.files_sweep}
    full = max(result["cache_sizes"], key=int)
    assert result["cache_sizes"][full]["fraction_of_catalog"] == 1.0


def test_jain_index():
    assert experiments.jain([10, 10, 10, 10]) == pytest.approx(1.0)
    assert experiments.jain([40, 0, 0, 0]) == pytest.approx(0.25)
    assert experiments.jain([30, 10]) == pytest.approx(0.8)
