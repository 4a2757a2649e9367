"""Realistic file names for a catalog of millions of files (issue 28), streamed.

``records(n, seed)`` yields ``n`` publish records (``input``, ``name``, ``scheme``, ``facets``,
as ``ndnsci translate --json`` gives them) of CMIP5, CMIP6 and CMS files whose facet
distributions are fitted from the real names in tests/data/corpora. Same seed, same records;
memory is constant but for one 64-bit digest per dataset (the duplicate check: ~10 MB at 10M
files). ``python bench/names.py --count N`` prints N names (one a line, stdout) and the rate on
stderr.

**The model.** Files are generated a *dataset* at a time, as archives hold them:

- CMIP5: a dataset is (product, institute, model, experiment, frequency, realm, table,
  ensemble, version); its files are its variables x their time chunks. CMIP6 likewise, with
  (activity, institution, source, experiment, member, table, grid, version). CMS: a dataset is
  (area, era, primary dataset, tier, processing-version); its files are GUID-named ROOT files in
  counter directories (MC) or run-number directories (data).
- Each dataset-level facet is drawn from its **empirical distribution over the corpus's
  distinct datasets** (each dataset counted once: the corpora hold a few datasets listed file by
  file, e.g. 706 of the 871 CMS MC LFNs are one ttH dataset, 434 of 652 CMIP6 files one GISS
  model, and a per-file fit would copy that accident). The skew is the corpus's own: for CMIP5
  models it is Zipf-like (``fitted_zipf``; the test prints the exponent).
- The joint structure kept: the institute (and CMIP6 activity) is a function of the model
  (experiment); the frequency and realm are functions of the table; the experiment is drawn from
  the model's own experiments with probability ``OWN_EXPERIMENT`` (else from all); the ensemble
  (member) from the experiment's own when the corpus has them (``fx`` is always ``r0i0p0``);
  the variables of a dataset are its table's vocabulary, each included with its frequency
  relative to the table's most common variable (so the common ones are in nearly every dataset,
  the rare ones in few: the Zipf-like skew of variables); each variable's files are contiguous
  chunks over the experiment's period (from the corpus's time ranges), each chunk of a span
  drawn from the corpus's spans at that frequency; a dataset gets a second, later version with
  the corpus's probability (CMIP5: 17 of 2,658 atomic datasets). A CMIP dataset drawn again is
  the next member of its ensemble (r1i1p1 -> r2i1p1, up to r100), a CMS one the next
  reprocessing (``-v1`` -> ``-v2``): the corpus's vocabularies are closed, and at millions of
  files most combinations of their common values are taken. CMS processing strings are drawn
  given the era (they name the era's release), and files per dataset from the corpus's own
  per-dataset counts.
- Default mix (``DEFAULT_MIX``): CMIP6 60%, CMIP5 30%, CMS 10%. ESGF serves more CMIP6 than
  CMIP5 (the newer, larger exercise: more models, members and variables; taken as 2:1); CMS
  keeps the 10% the bench used before, so its figures stay comparable.

Open facets (version, time range, ensemble) are drawn from the corpus's values, so every
facet's cardinality is bounded by the corpus's, as scaling a sample by resampling predicts
(``expected_cardinality``): a real 10M archive has more distinct versions and time ranges.
"""

from __future__ import annotations

import argparse
import bisect
import csv
import functools
import hashlib
import itertools
import math
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPORA = Path(__file__).parents[1] / "tests" / "data" / "corpora"
DEFAULT_MIX = {"cmip6": 0.6, "cmip5": 0.3, "cms": 0.1}
#: probability that a dataset's experiment is one the corpus has for its model
OWN_EXPERIMENT = 0.8
#: a variable's time chunks at most (a 3-hourly variable over 250 years in 1-year files: 250)
MAX_CHUNKS = 120
CMIP5_KEYS = ["product", "institute", "model", "experiment", "frequency", "realm", "table",
              "ensemble", "version", "variable"]  # fmt: skip
CMIP6_KEYS = ["activity_id", "institution_id", "source_id", "experiment_id", "member_id",
              "table_id", "variable_id", "grid_label", "version"]  # fmt: skip


class Dist:
    """A discrete distribution over values, drawn with one uniform and a bisection."""

    def __init__(self, counts: Counter[Any] | dict[Any, float]) -> None:
        items = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
        self.values = [v for v, _ in items]
        self.weights = [float(w) for _, w in items]
        self.total = sum(self.weights)
        self.cumulative = list(itertools.accumulate(self.weights))

    def draw(self, rng: random.Random) -> Any:
        return self.values[bisect.bisect_right(self.cumulative, rng.random() * self.total)]

    def shares(self) -> dict[Any, float]:
        return {v: w / self.total for v, w in zip(self.values, self.weights, strict=True)}

    def __len__(self) -> int:
        return len(self.values)


def expected_cardinality(dist: Dist, draws: int) -> float:
    """Distinct values expected in ``draws`` independent draws from ``dist``."""
    return sum(1 - (1 - p) ** draws for p in dist.shares().values())


def fitted_zipf(dist: Dist) -> float:
    """Least-squares slope of log(share) on log(rank): the Zipf exponent of a distribution."""
    points = [(math.log(i + 1), math.log(w)) for i, w in enumerate(dist.weights)]
    n = len(points)
    if n < 2:
        return 0.0
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return -sum((x - mx) * (y - my) for x, y in points) / sxx


def _rows(file: str) -> list[dict[str, str]]:
    with open(CORPORA / file, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _most_common(pairs: Sequence[tuple[Any, Any]]) -> dict[Any, Any]:
    by: dict[Any, Counter[Any]] = defaultdict(Counter)
    for key, value in pairs:
        by[key][value] += 1
    return {k: c.most_common(1)[0][0] for k, c in by.items()}


def _conditional(pairs: Sequence[tuple[Any, Any]]) -> dict[Any, Dist]:
    by: dict[Any, Counter[Any]] = defaultdict(Counter)
    for key, value in pairs:
        by[key][value] += 1
    return {k: Dist(c) for k, c in by.items()}


# --- time: periods per experiment, spans per time precision --------------------------------

_TIME = re.compile(r"(\d{4,12})-(\d{4,12})")


@dataclass
class Times:
    """Periods (start, end years) of each experiment, spans (years) of a file per precision."""

    periods: dict[str, tuple[int, int]] = field(default_factory=dict)
    spans: dict[int, Dist] = field(default_factory=dict)
    default_period: tuple[int, int] = (1850, 2005)

    @classmethod
    def fit(cls, experiment_times: Sequence[tuple[str, str]]) -> Times:
        starts: dict[str, list[int]] = defaultdict(list)
        ends: dict[str, list[int]] = defaultdict(list)
        spans: dict[int, Counter[int]] = defaultdict(Counter)
        for experiment, text in experiment_times:
            match = _TIME.fullmatch(text)
            if match is None or len(match[1]) != len(match[2]):
                continue
            start, end = int(match[1][:4]), int(match[2][:4])
            if not 0 <= end - start <= 500:
                continue
            starts[experiment].append(start)
            ends[experiment].append(end)
            spans[len(match[1])][end - start + 1] += 1
        periods = {e: (min(starts[e]), max(ends[e])) for e in starts}
        return cls(periods, {p: Dist(c) for p, c in spans.items()})

    def chunks(self, experiment: str, precision: int, rng: random.Random) -> list[str]:
        """A variable's time ranges: contiguous chunks over the experiment's period."""
        if precision == 0:
            return [""]
        first, last = self.periods.get(experiment, self.default_period)
        spans = self.spans.get(precision) or self.spans[6]
        span = spans.draw(rng)
        out: list[str] = []
        year = first
        while year <= last and len(out) < MAX_CHUNKS:
            end = min(year + span - 1, last)
            out.append(_point(year, precision, False) + "-" + _point(end, precision, True))
            year = end + 1
        return out


def _point(year: int, precision: int, end: bool) -> str:
    text = {4: "", 6: "12", 8: "1231", 10: "123118", 12: "12311800"}[precision] if end else {
        4: "", 6: "01", 8: "0101", 10: "010100", 12: "01010000"}[precision]  # fmt: skip
    return f"{year:04d}{text}"


def _precision(time_range: str) -> int:
    match = _TIME.fullmatch(time_range)
    return 0 if match is None else len(match[1])


# --- CMIP (5 and 6 share the model; only the fields and the name differ) -------------------


@dataclass
class Cmip:
    """The fitted model of one CMIP era: distributions over its distinct datasets."""

    scheme: str
    models: Dist  # model (CMIP6: source_id)
    institute: dict[str, str]
    product: dict[str, Dist]  # CMIP5 product per model; CMIP6: activity per experiment
    experiments: Dist
    experiments_of: dict[str, Dist]
    tables: Dist
    frequency: dict[str, str]
    realm: dict[str, str]  # CMIP6: the grid label, per model
    precision: dict[str, int]  # per table
    ensembles: Dist
    ensembles_of: dict[str, Dist]
    versions: Dist
    variables_of: dict[str, list[tuple[str, float]]]  # per table: (variable, inclusion prob)
    second_version: float
    times: Times
    grids_of: dict[str, Dist] = field(default_factory=dict)
    activity: dict[str, str] = field(default_factory=dict)

    def facet_dists(self) -> dict[str, Dist]:
        """The distribution of each dataset-level facet drawn directly (for the tests)."""
        return {"model": self.models, "table": self.tables, "version": self.versions}

    def dataset(self, rng: random.Random) -> dict[str, str]:
        model = self.models.draw(rng)
        own = self.experiments_of.get(model)
        experiment = (own if own is not None and rng.random() < OWN_EXPERIMENT
                      else self.experiments).draw(rng)  # fmt: skip
        table = self.tables.draw(rng)
        frequency = self.frequency[table]
        if frequency == "fx" and self.scheme == "cmip5":
            ensemble = "r0i0p0"
        else:
            ensemble = self.ensembles_of.get(experiment, self.ensembles).draw(rng)
        return {"model": model, "experiment": experiment, "table": table,
                "frequency": frequency, "ensemble": ensemble,
                "version": self.versions.draw(rng)}  # fmt: skip

    def variables(self, table: str, rng: random.Random) -> list[str]:
        vocab = self.variables_of[table]
        out = [v for v, p in vocab if rng.random() < p]
        return out or [vocab[0][0]]


def _dataset_rows(keys: Sequence[str], rows: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """One row per distinct dataset (all keys but variable and time range)."""
    seen: dict[tuple[str, ...], dict[str, str]] = {}
    for row in rows:
        seen.setdefault(tuple(row[k] for k in keys), row)
    return list(seen.values())


def _inclusion(
    rows: Sequence[dict[str, str]], table: str, variable: str
) -> dict[str, list[tuple[str, float]]]:
    """Per table, each variable with its count of datasets over the table's most common one."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        counts[row[table]][row[variable]] += 1
    out = {}
    for t, c in counts.items():
        top = c.most_common(1)[0][1]
        out[t] = [(v, n / top) for v, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))]
    return out


@functools.cache
def cmip5_model() -> Cmip:
    files = []
    for row in _rows("cmip5_paths.tsv"):
        if not row["gt_model"]:
            continue
        facets = {k: row[f"gt_{k}"] for k in CMIP5_KEYS}
        facets["table"] = row["path"].rsplit("/", 1)[1].split("_")[1]
        facets["time"] = row["gt_time"]
        files.append(facets)
    dataset_keys = CMIP5_KEYS[:9]
    datasets = _dataset_rows(dataset_keys, files)
    atomic = _dataset_rows([*dataset_keys[:8], "variable"], files)
    versions_of: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for f in files:
        versions_of[tuple(f[k] for k in [*dataset_keys[:8], "variable"])].add(f["version"])
    several = sum(len(v) > 1 for v in versions_of.values())
    precision = _most_common([(f["table"], _precision(f["time"])) for f in files])
    return Cmip(
        scheme="cmip5",
        models=Dist(Counter(d["model"] for d in datasets)),
        institute=_most_common([(d["model"], d["institute"]) for d in datasets]),
        product=_conditional([(d["model"], d["product"]) for d in datasets]),
        experiments=Dist(Counter(d["experiment"] for d in datasets)),
        experiments_of=_conditional([(d["model"], d["experiment"]) for d in datasets]),
        tables=Dist(Counter(d["table"] for d in datasets)),
        frequency=_most_common([(d["table"], d["frequency"]) for d in datasets]),
        realm=_most_common([(d["table"], d["realm"]) for d in datasets]),
        precision=precision,
        ensembles=Dist(Counter(d["ensemble"] for d in datasets if d["ensemble"] != "r0i0p0")),
        ensembles_of=_conditional(
            [(d["experiment"], d["ensemble"]) for d in datasets if d["ensemble"] != "r0i0p0"]
        ),
        versions=Dist(Counter(d["version"] for d in datasets)),
        variables_of=_inclusion(atomic, "table", "variable"),
        second_version=several / len(versions_of),
        times=Times.fit([(f["experiment"], f["time"]) for f in files]),
    )


_CMIP6_PATH = re.compile(r"CMIP6/" + "/".join(["([^/]+)"] * 9) + r"/([^/]+\.nc)$")


@functools.cache
def cmip6_model() -> Cmip:
    files = []
    for row in _rows("cmip6_paths.tsv"):
        match = _CMIP6_PATH.search(row["path"])
        if not match or not match[9].startswith("v"):
            continue
        facets = dict(zip(CMIP6_KEYS, match.groups()[:9], strict=True))
        stem = match[10][:-3].split("_")
        if stem[:2] != [facets["variable_id"], facets["table_id"]] or len(stem) not in (6, 7):
            continue
        facets["time"] = stem[6] if len(stem) == 7 else ""
        if facets["member_id"].startswith("s"):  # sub-experiment members: dcpp only
            continue
        files.append(facets)
    files = list({tuple(f.values()): f for f in files}.values())
    dataset_keys = [k for k in CMIP6_KEYS if k != "variable_id"]
    datasets = _dataset_rows(dataset_keys, files)
    atomic = _dataset_rows([*dataset_keys, "variable_id"], files)
    precision = _most_common([(f["table_id"], _precision(f["time"])) for f in files])
    return Cmip(
        scheme="cmip6",
        models=Dist(Counter(d["source_id"] for d in datasets)),
        institute=_most_common([(d["source_id"], d["institution_id"]) for d in datasets]),
        product={},
        experiments=Dist(Counter(d["experiment_id"] for d in datasets)),
        experiments_of=_conditional([(d["source_id"], d["experiment_id"]) for d in datasets]),
        tables=Dist(Counter(d["table_id"] for d in datasets)),
        frequency={t: {0: "fx"}.get(p, "") for t, p in precision.items()},
        realm={},
        precision=precision,
        ensembles=Dist(Counter(d["member_id"] for d in datasets)),
        ensembles_of=_conditional([(d["experiment_id"], d["member_id"]) for d in datasets]),
        versions=Dist(Counter(d["version"] for d in datasets)),
        variables_of=_inclusion(atomic, "table_id", "variable_id"),
        second_version=cmip5_model().second_version,  # too few CMIP6 datasets to tell
        times=Times.fit([(f["experiment_id"], f["time"]) for f in files]),
        grids_of=_conditional([(d["source_id"], d["grid_label"]) for d in datasets]),
        activity=_most_common([(d["experiment_id"], d["activity_id"]) for d in datasets]),
    )


# --- CMS ------------------------------------------------------------------------------------


@dataclass
class Cms:
    areas: Dist
    eras: dict[str, Dist]  # per area
    primaries: Dist
    tiers: dict[str, Dist]  # per area
    processing_of: dict[str, Dist]  # per era
    processing: Dist
    counters: Dist
    files: Dist  # files per dataset
    runs: dict[str, tuple[int, int]]  # per data era: first and last run number

    def facet_dists(self) -> dict[str, Dist]:
        return {"area": self.areas, "primary_dataset": self.primaries}


_TIER = re.compile(r"[A-Z][A-Z0-9-]*")  # as the CMS translator's


@functools.cache
def cms_model() -> Cms:
    datasets: dict[tuple[str, ...], int] = Counter()
    runs: dict[str, list[int]] = defaultdict(list)
    counters: Counter[str] = Counter()
    for row in _rows("cms_lfns.tsv"):
        parts = row["lfn"].split("/")
        if len(parts) < 9 or parts[1] != "store" or parts[2] not in ("mc", "data"):
            continue
        if not parts[-1].endswith(".root") or not _TIER.fullmatch(parts[5]):
            continue  # placeholders of test code ("data_tier"), or no tier
        datasets[tuple(parts[2:7])] += 1
        if parts[2] == "data" and len(parts) == 11 and parts[7] == "000":
            runs[parts[3]].append(int(parts[8] + parts[9]))
        elif len(parts) == 9 and parts[7].isdigit():
            counters[parts[7]] += 1
    keys = list(datasets)
    return Cms(
        areas=Dist(Counter(k[0] for k in keys)),
        eras=_conditional([(k[0], k[1]) for k in keys]),
        primaries=Dist(Counter(k[2] for k in keys)),
        tiers=_conditional([(k[0], k[3]) for k in keys]),
        processing_of=_conditional([(k[1], k[4]) for k in keys]),
        processing=Dist(Counter(k[4] for k in keys)),
        counters=Dist(counters),
        files=Dist(Counter(datasets.values())),
        runs={era: (min(r), max(r)) for era, r in runs.items()},
    )


# --- the names ------------------------------------------------------------------------------


def _guid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032X}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_MEMBER = re.compile(r"r(\d+)(i\d+p\d+(?:f\d+)?)")
#: a realization number at most (CMIP6's largest ensembles have ~50 members)
MAX_REALIZATION = 100


def _next_member(member: str) -> str | None:
    """The next realization of an ensemble member (r1i1p1 -> r2i1p1); None for r0i0p0."""
    match = _MEMBER.fullmatch(member)
    if match is None or member == "r0i0p0" or int(match[1]) >= MAX_REALIZATION:
        return None
    return f"r{int(match[1]) + 1}{match[2]}"


def _versions(m: Cmip, first: str, rng: random.Random) -> list[str]:
    """A dataset's versions: its first, and rarely a second (a later publication)."""
    if rng.random() < m.second_version and (later := m.versions.draw(rng)) != first:
        return sorted([first, later])
    return [first]


def _cmip5_files(
    m: Cmip, rng: random.Random, taken: Callable[[tuple[str, ...]], bool]
) -> tuple[list[tuple[str, ...]], list[dict[str, Any]]]:
    d = m.dataset(rng)
    model, table = d["model"], d["table"]
    facets = {"activity": "CMIP5", "product": m.product[model].draw(rng),
              "institute": m.institute[model], "model": model, "experiment": d["experiment"],
              "frequency": d["frequency"], "realm": m.realm[table], "table": table,
              "ensemble": d["ensemble"], "version": d["version"]}  # fmt: skip
    versions = _versions(m, d["version"], rng)

    def keys() -> list[tuple[str, ...]]:
        rest = tuple(v for k, v in facets.items() if k != "version")
        return [(*rest, version) for version in versions]

    # a dataset drawn again is one more member of the ensemble (the corpus's facets are closed
    # vocabularies: at 10M most combinations of the common values are taken)
    while any(map(taken, keys())) and (member := _next_member(facets["ensemble"])):
        facets["ensemble"] = d["ensemble"] = member
    out = []
    precision = m.precision[table]
    for variable in m.variables(table, rng):
        chunks = m.times.chunks(d["experiment"], precision, rng)
        stem = f"{variable}_{table}_{model}_{d['experiment']}_{d['ensemble']}"
        for version in versions:
            directory = "/".join((facets["product"], facets["institute"], model,
                                  d["experiment"], d["frequency"], facets["realm"], table,
                                  d["ensemble"], version, variable))  # fmt: skip
            for chunk in chunks:
                filename = f"{stem}_{chunk}.nc" if chunk else stem + ".nc"
                out.append({
                    "input": f"/glade/collections/cmip/cmip5/{directory}/{filename}",
                    "name": f"/CMIP5/{directory}/{filename}", "scheme": "cmip5",
                    "filename": filename,
                    "facets": {**facets, "version": version, "variable": variable,
                               "time_range": chunk or None, "geo": None},
                })  # fmt: skip
    return keys(), out


def _cmip6_files(
    m: Cmip, rng: random.Random, taken: Callable[[tuple[str, ...]], bool]
) -> tuple[list[tuple[str, ...]], list[dict[str, Any]]]:
    d = m.dataset(rng)
    model, table, experiment = d["model"], d["table"], d["experiment"]
    grid = m.grids_of[model].draw(rng)
    facets = {
        "mip_era": "CMIP6",
        "activity_id": m.activity[experiment],
        "institution_id": m.institute[model],
        "source_id": model,
        "experiment_id": experiment,
        "member_id": d["ensemble"],
        "table_id": table,
    }
    versions = _versions(m, d["version"], rng)

    def keys() -> list[tuple[str, ...]]:
        return [(*facets.values(), grid, version) for version in versions]

    while any(map(taken, keys())) and (member := _next_member(facets["member_id"])):
        facets["member_id"] = d["ensemble"] = member
    out = []
    precision = m.precision[table]
    prefix = "/".join(v for k, v in facets.items() if k != "mip_era")
    for variable in m.variables(table, rng):
        chunks = m.times.chunks(experiment, precision, rng)
        stem = f"{variable}_{table}_{model}_{experiment}_{d['ensemble']}_{grid}"
        for version in versions:
            directory = f"{prefix}/{variable}/{grid}/{version}"
            for chunk in chunks:
                filename = f"{stem}_{chunk}.nc" if chunk else stem + ".nc"
                name = f"/CMIP6/{directory}/{filename}"
                out.append({
                    "input": name, "name": name,
                    "scheme": "cmip6", "filename": filename,
                    "facets": {**facets, "variable_id": variable, "grid_label": grid,
                               "version": version, "time_range": chunk or None},
                })  # fmt: skip
    return keys(), out


_VERSION = re.compile(r"-v(\d+)$")


def _cms_files(
    m: Cms, rng: random.Random, taken: Callable[[tuple[str, ...]], bool]
) -> tuple[list[tuple[str, ...]], list[dict[str, Any]]]:
    area = m.areas.draw(rng)
    era = m.eras[area].draw(rng)
    primary = m.primaries.draw(rng)
    tier = m.tiers[area].draw(rng)
    processing = m.processing_of.get(era, m.processing).draw(rng)
    key = (area, era, primary, tier, processing)
    # the corpus's closed vocabularies allow ~20,000 datasets: a dataset drawn again is a
    # reprocessing of it, as CMS names them (the processing string's -vN, counting up)
    while taken(key):
        match = _VERSION.search(processing)
        stem, number = (processing[: match.start()], int(match[1])) if match else (processing, 0)
        processing = f"{stem}-v{number + 1}"
        key = (area, era, primary, tier, processing)
    dataset = f"/store/{area}/{era}/{primary}/{tier}/{processing}"
    n = m.files.draw(rng)
    out = []
    if area == "data":
        first, last = m.runs.get(era, (100000, 400000))
        run = rng.randint(first, last)
    counter = m.counters.draw(rng)
    for i in range(n):
        if area == "data":
            if i % 50 == 0:
                run += rng.randint(1, 20)
            r = f"{run:06d}"
            block, filename = str(run), _guid(rng) + ".root"
            lfn = f"{dataset}/000/{r[:3]}/{r[3:]}/00000/{filename}"
        else:
            if i and i % 1000 == 0:
                counter = str(int(counter) + 10000) if counter.isdigit() else counter
            block, filename = counter, _guid(rng) + ".root"
            lfn = f"{dataset}/{block}/{filename}"
        facets = {"area": area, "era": era, "primary_dataset": primary, "tier": tier,
                  "processing": processing, "counter": block, "filename": filename}  # fmt: skip
        out.append({"input": lfn, "name": "/CMS" + lfn, "scheme": "cms", "facets": facets})
    return [key], out


Keys = list[tuple[str, ...]]
Maker = Callable[[Any, random.Random, Callable[[tuple[str, ...]], bool]], tuple[Keys, list[Any]]]
#: per scheme: the function making a dataset's files, the fitted model it takes
GENERATORS: dict[str, tuple[Maker, Callable[[], Any]]] = {
    "cmip5": (_cmip5_files, cmip5_model),
    "cmip6": (_cmip6_files, cmip6_model),
    "cms": (_cms_files, cms_model),
}


class Stats:
    """What a generation did: datasets per scheme, duplicate datasets skipped."""

    def __init__(self) -> None:
        self.datasets: Counter[str] = Counter()
        self.files: Counter[str] = Counter()
        self.duplicates = 0


def records(
    n: int, seed: int = 0, mix: dict[str, float] | None = None, stats: Stats | None = None
) -> Iterator[dict[str, Any]]:
    """``n`` records, a dataset at a time, the schemes mixed in ``mix``'s proportions of files.

    The scheme of each next dataset is the one furthest below its share of the files so far, so
    the mix holds at every prefix of the stream. A dataset drawn a second time (same facets) is
    skipped and counted in ``stats.duplicates``: names are never repeated.
    """
    mix = dict(DEFAULT_MIX if mix is None else mix)
    total = sum(mix.values())
    shares = {k: v / total for k, v in mix.items() if v > 0}
    stats = stats if stats is not None else Stats()
    rng = random.Random(seed)
    models = {k: GENERATORS[k][1]() for k in shares}
    seen: set[bytes] = set()

    def digest(scheme: str, key: tuple[str, ...]) -> bytes:
        return hashlib.blake2b("\x1f".join((scheme, *key)).encode(), digest_size=8).digest()

    produced = 0
    while produced < n:
        scheme = min(shares, key=lambda k: (stats.files[k] - shares[k] * produced) / shares[k])

        def taken(key: tuple[str, ...], scheme: str = scheme) -> bool:
            return digest(scheme, key) in seen

        keys, files = GENERATORS[scheme][0](models[scheme], rng, taken)
        digests = [digest(scheme, key) for key in keys]  # one per version of the dataset
        if any(d in seen for d in digests):
            stats.duplicates += 1
            continue
        seen.update(digests)
        stats.datasets[scheme] += 1
        for record in files[: n - produced]:
            stats.files[scheme] += 1
            produced += 1
            yield record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="time only, print no names")
    args = parser.parse_args()
    stats = Stats()
    started = time.perf_counter()
    out = sys.stdout
    for record in records(args.count, args.seed, stats=stats):
        if not args.quiet:
            out.write(record["input"] + "\n")
    elapsed = time.perf_counter() - started
    print(f"{args.count:,} names in {elapsed:.1f} s: {args.count / elapsed:,.0f} names/s; "
          f"datasets {dict(stats.datasets)}, duplicate datasets skipped {stats.duplicates}",
          file=sys.stderr)  # fmt: skip


if __name__ == "__main__":
    main()
