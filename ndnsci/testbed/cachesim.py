"""The cache-hit study as a discrete simulation: consumers behind one router cache fetch whole
files, chosen by a Zipf law, segment by segment; the cache holds Data packets and evicts by
LRU, LFU, FIFO or Random.

It works at the granularity NDNd's content store does (one entry per segment, a capacity in
packets), so its LRU can be checked against the real forwarder replaying the same requests
(``experiments.cachehit``). No I/O here.

Workload: a catalog of file sizes drawn from a real size distribution (the sample archive's,
:func:`make_catalog`), a random popularity order, then ``consumers`` x
``requests_per_consumer`` requests, each a whole file picked with probability proportional to
``1 / rank**alpha``; the consumers take turns (:func:`make_workload`). The hit ratio is
hits / segments asked (a byte hit ratio, to within the last segment).
"""

from __future__ import annotations

import heapq
import random
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

POLICIES = ("lru", "lfu", "fifo", "random")
ALPHA = 1.15


@dataclass(frozen=True)
class Request:
    consumer: int
    file: int  # index into Workload.sizes


@dataclass(frozen=True)
class Workload:
    sizes: list[int]  # bytes, one per file
    requests: list[Request]
    segment_size: int

    def segments(self, file: int) -> int:
        return max(1, -(-self.sizes[file] // self.segment_size))

    @property
    def catalog_segments(self) -> int:
        return sum(self.segments(f) for f in range(len(self.sizes)))

    @property
    def requested_segments(self) -> int:
        return sum(self.segments(r.file) for r in self.requests)


def zipf_weights(n: int, alpha: float = ALPHA) -> list[float]:
    weights = [1.0 / (rank**alpha) for rank in range(1, n + 1)]
    total = sum(weights)
    return [w / total for w in weights]


def make_catalog(size_distribution: Sequence[int], files: int, seed: int = 0) -> list[int]:
    """``files`` file sizes drawn (with replacement) from a real size distribution."""
    if not size_distribution or files < 1:
        raise ValueError("need a size distribution and at least one file")
    rng = random.Random(seed)
    return [rng.choice(list(size_distribution)) for _ in range(files)]


def make_workload(
    sizes: Sequence[int],
    *,
    consumers: int,
    requests_per_consumer: int,
    alpha: float = ALPHA,
    segment_size: int = 8000,
    seed: int = 0,
) -> Workload:
    """Zipf requests over the files ``sizes``: a popularity order (random: popularity does
    not follow size), then ``requests_per_consumer`` rounds in which each consumer asks for
    one file."""
    if consumers < 1 or requests_per_consumer < 1:
        raise ValueError("need at least one consumer and one request each")
    rng = random.Random(seed)
    by_popularity = list(range(len(sizes)))
    rng.shuffle(by_popularity)
    weights = zipf_weights(len(sizes), alpha)
    ranks = rng.choices(range(len(sizes)), weights, k=consumers * requests_per_consumer)
    requests = [Request(i % consumers, by_popularity[rank]) for i, rank in enumerate(ranks)]
    return Workload(list(sizes), requests, segment_size)


# --- caches ------------------------------------------------------------------------------------


class Cache:
    """A set of segments (``(file, segment)``) of at most ``capacity`` entries."""

    def __init__(self, capacity: int, seed: int = 0) -> None:
        self.capacity = capacity

    def lookup(self, key: tuple[int, int]) -> bool:
        """True on a hit; on a miss the segment is admitted (NDNd admits everything)."""
        raise NotImplementedError


class Lru(Cache):
    def __init__(self, capacity: int, seed: int = 0) -> None:
        super().__init__(capacity)
        self.entries: OrderedDict[tuple[int, int], None] = OrderedDict()

    def lookup(self, key: tuple[int, int]) -> bool:
        if key in self.entries:
            self.entries.move_to_end(key)
            return True
        if self.capacity > 0:
            self.entries[key] = None
            if len(self.entries) > self.capacity:
                self.entries.popitem(last=False)
        return False


class Fifo(Lru):
    def lookup(self, key: tuple[int, int]) -> bool:
        if key in self.entries:
            return True
        if self.capacity > 0:
            self.entries[key] = None
            if len(self.entries) > self.capacity:
                self.entries.popitem(last=False)
        return False


class Lfu(Cache):
    """Evicts the entry used least often while cached; ties go to the least recently used."""

    def __init__(self, capacity: int, seed: int = 0) -> None:
        super().__init__(capacity)
        self.counts: dict[tuple[int, int], tuple[int, int]] = {}  # key -> (uses, last use)
        self.heap: list[tuple[int, int, tuple[int, int]]] = []
        self.clock = 0

    def lookup(self, key: tuple[int, int]) -> bool:
        self.clock += 1
        hit = key in self.counts
        if not hit and self.capacity == 0:
            return False
        uses = self.counts[key][0] + 1 if hit else 1
        self.counts[key] = (uses, self.clock)
        heapq.heappush(self.heap, (uses, self.clock, key))
        while len(self.counts) > self.capacity:
            victim_uses, victim_clock, victim = heapq.heappop(self.heap)
            if self.counts.get(victim) == (victim_uses, victim_clock):  # else: stale
                del self.counts[victim]
        if len(self.heap) > 4 * max(self.capacity, 16):
            self._compact()
        return hit

    def _compact(self) -> None:
        self.heap = [(u, c, k) for k, (u, c) in self.counts.items()]
        heapq.heapify(self.heap)


class RandomEviction(Cache):
    def __init__(self, capacity: int, seed: int = 0) -> None:
        super().__init__(capacity)
        self.rng = random.Random(seed)
        self.keys: list[tuple[int, int]] = []
        self.where: dict[tuple[int, int], int] = {}

    def lookup(self, key: tuple[int, int]) -> bool:
        if key in self.where:
            return True
        if self.capacity == 0:
            return False
        if len(self.keys) >= self.capacity:
            i = self.rng.randrange(len(self.keys))
            victim, last = self.keys[i], self.keys[-1]
            self.keys[i] = last
            self.where[last] = i
            self.keys.pop()
            del self.where[victim]
        self.where[key] = len(self.keys)
        self.keys.append(key)
        return False


CACHES: dict[str, type[Cache]] = {
    "lru": Lru,
    "lfu": Lfu,
    "fifo": Fifo,
    "random": RandomEviction,
}


def make_cache(policy: str, capacity: int, seed: int = 0) -> Cache:
    try:
        return CACHES[policy](capacity, seed)
    except KeyError:
        raise ValueError(f"unknown policy {policy!r}: {', '.join(POLICIES)}") from None


# --- running -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    hits: int
    lookups: int
    file_hits: int  # requests served entirely from the cache
    requests: int

    @property
    def hit_ratio(self) -> float:
        return self.hits / self.lookups if self.lookups else 0.0

    @property
    def file_hit_ratio(self) -> float:
        return self.file_hits / self.requests if self.requests else 0.0


def simulate(workload: Workload, policy: str, capacity: int, seed: int = 0) -> Outcome:
    """Run the workload through one cache; every request fetches its segments in order."""
    cache = make_cache(policy, capacity, seed)
    lookup = cache.lookup
    hits = lookups = file_hits = 0
    for request in workload.requests:
        count = workload.segments(request.file)
        got = sum(lookup((request.file, seg)) for seg in range(count))
        hits += got
        lookups += count
        file_hits += got == count
    return Outcome(hits, lookups, file_hits, len(workload.requests))


def mean_hit_ratio(
    sizes: Sequence[int],
    policy: str,
    *,
    capacity: int,
    consumers: int,
    requests_per_consumer: int,
    seeds: Iterable[int],
    alpha: float = ALPHA,
    segment_size: int = 8000,
) -> float:
    """The hit ratio of a cache of ``capacity`` packets, averaged over workloads (one per
    seed) on the same files."""
    ratios = []
    for seed in seeds:
        workload = make_workload(
            sizes,
            consumers=consumers,
            requests_per_consumer=requests_per_consumer,
            alpha=alpha,
            segment_size=segment_size,
            seed=seed,
        )
        ratios.append(simulate(workload, policy, capacity, seed).hit_ratio)
    return sum(ratios) / len(ratios)
