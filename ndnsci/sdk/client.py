"""The catalog's REST API from Python: :class:`Catalog`, :class:`AsyncCatalog` and typed results.

Requests are built and answers read without I/O, once (``_Api``'s plans), and carried out by
thin shells, the synchronous and the asynchronous client, so both behave the same; httpx is
imported when a client is created, not by ``import ndnsci``.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
)
from collections.abc import Sequence as AbcSequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar, overload
from urllib.parse import quote, urlencode

from ndnsci.base.environment import settings
from ndnsci.errors import (
    CatalogError,
    CatalogUnavailableError,
    NotInCatalogError,
    QueryError,
    UnknownFacetError,
    missing,
)
from ndnsci.sdk.manifest import ManifestEntry, parse_line, relative_path
from ndnsci.sdk.publish import (
    Answer,
    Batcher,
    Pending,
    PublishBatch,
    PublishItem,
    PublishLimits,
    PublishReport,
    interpret,
)
from ndnsci.sdk.transfer import AsyncTransfer, Transfer, TransferFile, TransferStatus

if TYPE_CHECKING:
    import asyncio
    from concurrent.futures import Future, ThreadPoolExecutor

    import httpx
    import pandas

ENV_URL = "NDNSCI_CATALOG"
API = "/api/v1/"
PAGE_SIZE = 500  # the server's limit is 1000; 500 rows are ~0.5 MB of JSON
FacetValue = str | AbcSequence[str]
FIXED_COLUMNS = ("name", "filename", "scheme", "size", "sha256", "time_start", "time_end")
#: how often a request the catalog refused as too busy (503) is sent again, after the wait its
#: Retry-After asks for (at most MAX_RETRY_AFTER seconds each)
BUSY_RETRIES = 5
MAX_RETRY_AFTER = 30.0
T = TypeVar("T")


def catalog_url(url: str | None = None) -> str:
    """The catalog's base URL: ``url``, else ``$NDNSCI_CATALOG``, else http://127.0.0.1:8000.

    A trailing ``/api/v1`` is accepted and dropped, so the portal's and the API's URL both work.

    >>> catalog_url("http://example.org:8000/api/v1/")
    'http://example.org:8000'
    """
    base = (url or settings().catalog_url).strip().rstrip("/")
    return base.removesuffix("/api/v1")


# --- typed results -------------------------------------------------------------------------------


@dataclass(frozen=True)
class File:
    """One published file, as a search returns it.

    ``facets`` holds the scheme's facets (``model``, ``experiment``, ``variable`` for CMIP5;
    ``era``, ``primary_dataset``, ``tier`` for CMS, ...); ``name`` is what to fetch.
    """

    name: str
    scheme: str
    filename: str | None = None
    size: int | None = None
    sha256: str | None = None
    facets: Mapping[str, str | None] = field(default_factory=dict)
    time_start: str | None = None
    time_end: str | None = None

    @property
    def path(self) -> str:
        """Where the file goes below a download directory in the DRS layout."""
        return relative_path(self.name)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "facets": dict(self.facets)}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> File:
        return cls(**_common_fields(obj))


@dataclass(frozen=True)
class FileRecord(File):
    """A file's full record (:meth:`Catalog.get`): metadata, corrections, versions."""

    mtime: float | None = None
    version: str | None = None
    corrections: list[dict[str, str]] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    published_at: str | None = None
    seq: int | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    #: verified copies transfer jobs made at the catalog's site: site, path, size, sha256
    replicas: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> FileRecord:
        return cls(
            **_common_fields(obj),
            mtime=obj.get("mtime"),
            version=obj.get("version"),
            corrections=list(obj.get("corrections") or []),
            metadata=obj.get("metadata"),
            published_at=obj.get("published_at"),
            seq=obj.get("seq"),
            history=list(obj.get("history") or []),
            replicas=list(obj.get("replicas") or []),
        )


def _common_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": obj["name"],
        "scheme": obj.get("scheme") or "",
        "filename": obj.get("filename"),
        "size": obj.get("size"),
        "sha256": obj.get("sha256"),
        "facets": dict(obj.get("facets") or {}),
        "time_start": obj.get("time_start"),
        "time_end": obj.get("time_end"),
    }


@dataclass(frozen=True)
class Node:
    """A name component of the catalog's tree (:meth:`Catalog.autocomplete`)."""

    component: str
    name: str
    count: int
    leaf: bool


@dataclass(frozen=True)
class Change:
    """One entry of the catalog's change feed: ``op`` is 'publish' or 'retract'."""

    seq: int
    op: str
    name: str
    version: str | None
    at: str


@dataclass(frozen=True)
class Changes:
    """A page of the change feed (:meth:`Catalog.changes`); pass ``next`` as ``since``."""

    since: int
    last_seq: int
    changes: list[Change]
    next: int

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Changes:
        return cls(
            since=int(obj["since"]),
            last_seq=int(obj["last_seq"]),
            changes=[Change(**c) for c in obj["changes"]],
            next=int(obj["next"]),
        )


# --- queries -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """A search, as the catalog's query parameters (facet filters are ANDed across facets)."""

    params: tuple[tuple[str, str], ...]

    @classmethod
    def build(
        cls,
        facets: Mapping[str, FacetValue | None],
        *,
        q: str | None = None,
        prefix: str | None = None,
        start: str | None = None,
        end: str | None = None,
        scheme: FacetValue | None = None,
        exclude: Mapping[str, FacetValue] | None = None,
        sort: str | None = None,
    ) -> Query:
        params: list[tuple[str, str]] = []
        for key, text in (("q", q), ("prefix", prefix), ("start", start), ("end", end)):
            if text:
                params.append((key, str(text)))
        params += [("scheme", v) for v in _values(scheme)]
        if sort:
            params.append(("sort", sort))
        for key, wanted in facets.items():
            params += [(key, v) for v in _values(wanted)]
        for key, unwanted in (exclude or {}).items():
            params += [(f"{key}!", v) for v in _values(unwanted)]
        return cls(tuple(params))

    @classmethod
    def parse(cls, text: str) -> Query:
        """``'model=HadCM3 variable=tas'`` (the command line's form) or a URL query string.

        >>> Query.parse("model=HadCM3 variable=tas,pr").params
        (('model', 'HadCM3'), ('variable', 'tas'), ('variable', 'pr'))
        """
        from urllib.parse import parse_qsl

        if "&" in text or (" " not in text.strip() and "%" in text):
            return cls(tuple(parse_qsl(text.strip(), keep_blank_values=False)))
        params: list[tuple[str, str]] = []
        for word in text.split():
            key, sep, value = word.partition("=")
            if not sep or not key.rstrip("!") or not value:
                raise QueryError(f"{word!r} is not facet=value (e.g. model=HadCM3)")
            params += [(key, v) for v in value.split(",") if v]
        return cls(tuple(params))

    def to_string(self) -> str:
        """The URL query string (what POST /manifests takes as ``search``)."""
        return urlencode(self.params)

    def __str__(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.params) or "(everything)"


def _values(value: FacetValue | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _page_params(query: Query, offset: int, limit: int, count_facets: bool) -> list[Any]:
    params: list[tuple[str, Any]] = [*query.params, ("limit", limit), ("offset", offset)]
    if not count_facets:
        params.append(("facets", ""))  # the facet counts are read once, with the first page
    return params


# --- answers -------------------------------------------------------------------------------------


def _check(response: httpx.Response, base: str) -> Any:
    """The JSON of a successful answer; a CatalogError saying what went wrong otherwise."""
    body: Any = None
    try:
        body = response.json()
    except ValueError:
        if response.is_success:
            raise CatalogUnavailableError(
                f"{base} answered {response.request.url} with something that is not JSON: is it "
                f"an ndnsci catalog? (set --catalog or {ENV_URL})",
                url=base,
                status=response.status_code,
            ) from None
    if response.is_success:
        return body
    raise _error(response.status_code, body, response.text, base)


def _error(status: int, body: Any, text: str, base: str) -> CatalogError:
    detail = body.get("detail") if isinstance(body, dict) else None
    message = str(detail or text[:300] or f"HTTP {status}")
    kwargs: dict[str, Any] = {"url": base, "status": status, "detail": body}
    if status == 400 and isinstance(body, dict) and body.get("valid_facets") is not None:
        return UnknownFacetError(message, valid_facets=list(body["valid_facets"]), **kwargs)
    if status in (400, 422):
        return QueryError(message, **kwargs)
    if status == 404:
        return NotInCatalogError(message, **kwargs)
    return CatalogError(f"the catalog at {base} answered {status}: {message}", **kwargs)


def _unavailable(exc: Exception, base: str) -> CatalogUnavailableError:
    import httpx

    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return CatalogUnavailableError(
            f"the catalog at {base} dropped the connection during a request "
            f"({type(exc).__name__}: {exc or 'no answer'}); was it stopped or restarted? What "
            "it had answered before stays done: run the same command again",
            url=base,
        )
    return CatalogUnavailableError(
        f"no catalog answers at {base} ({type(exc).__name__}: {exc or 'no answer'}); start one "
        f"with `ndnsci up`, or point --catalog / {ENV_URL} at a running catalog",
        url=base,
    )


def _busy_wait(response: httpx.Response) -> float | None:
    """Seconds to wait before sending a request again that the catalog refused as too busy
    (503, with Retry-After); None for any other answer."""
    if response.status_code != 503:
        return None
    try:
        return min(MAX_RETRY_AFTER, max(0.0, float(response.headers.get("retry-after", "1"))))
    except ValueError:
        return 1.0


def _manifest_bodies(
    what: SearchResults | AsyncSearchResults | Query | str | Iterable[str],
    limits: Mapping[str, int],
) -> list[Any]:
    """The request bodies of a manifest: a search in one; names in pieces the catalog takes
    (``max_manifest_names`` and ``max_body_bytes`` of its ``GET /limits``)."""
    body = _manifest_body(what)
    if "names" not in body:
        return [body]
    most = limits.get("max_manifest_names") or len(body["names"]) or 1
    room = (limits.get("max_body_bytes") or 1 << 62) - 64  # {"names": [...]}
    bodies: list[Any] = []
    piece: list[str] = []
    size = 0
    for name in body["names"]:
        cost = len(json.dumps(name)) + 2
        if piece and (len(piece) >= most or size + cost > room):
            bodies.append({"names": piece})
            piece, size = [], 0
        piece.append(name)
        size += cost
    return [*bodies, {"names": piece}] if piece or not bodies else bodies


# --- the core: requests built and answers read, without I/O --------------------------------------
#
# Each method of _Api is a plan: a generator that yields the steps of a call of the API (a
# request to send, a wait, a publish batch to post...) and returns what the answers mean. The
# clients below only carry the steps out, Catalog blocking and AsyncCatalog awaiting (httpx's
# BaseClient / Client / AsyncClient split): busy retries, errors, pages, publish batches,
# manifests and exports are written once, here.


def _same(body: Any) -> Any:
    return body


class _Call(NamedTuple, Generic[T]):
    """One request of the API, as plain values, and how to read its answer: ``read`` turns
    the answer's JSON (its text with ``text``, its rows with ``lines``) into the result."""

    method: str
    path: str
    params: Any = None
    json: Any = None
    headers: Mapping[str, str] | None = None
    content: Iterable[bytes] | AsyncIterable[bytes] | None = None
    #: an answer of JSON lines, each non-empty one parsed by ``lines(line, number)`` as it arrives
    lines: Callable[[str, int], Any] | None = None
    text: bool = False
    read: Callable[[Any], T] = _same

    def request(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        return http.build_request(
            self.method, self.path, params=self.params, json=self.json, headers=self.headers,
            content=self.content,
        )  # fmt: skip

    def sending(self, content: Iterable[bytes] | AsyncIterable[bytes]) -> _Call[T]:
        return self._replace(content=content)


class _Reply(NamedTuple):
    """What a client answers a :class:`_Call` with: the response (its body read), and the
    parsed rows of a successful ``lines`` call."""

    response: httpx.Response
    rows: list[Any] | None = None


class _Sleep(NamedTuple):
    """Wait this long (the catalog asked to be asked again later)."""

    seconds: float


class _Start(NamedTuple):
    """Send ``call`` in the background: the client answers a handle once its body is sent,
    so that requests arrive in order."""

    call: _Call[Any]


class _Wait(NamedTuple):
    """The :class:`_Reply` to a started call (its handle)."""

    handle: Any


class _Next(NamedTuple):
    """The next batch of a publish (``run.next`` or ``run.anext`` of the records)."""

    run: _PublishRun
    items: Iterator[PublishItem] | AsyncIterator[PublishItem]


_Step = _Call[Any] | _Sleep | _Start | _Wait | _Next
Plan = Generator[_Step, Any, T]


class _Rows:
    """The rows of a JSON-lines answer, parsed as its lines arrive."""

    def __init__(self, parse: Callable[[str, int], Any]) -> None:
        self.parse, self.rows, self.number = parse, list[Any](), 0

    def add(self, line: str) -> None:
        self.number += 1
        if line.strip():
            self.rows.append(self.parse(line, self.number))


class _Walk(Generic[T]):
    """A plan, stepped through by a client: ``for step in walk`` gives each step; the client
    sets ``reply`` to its outcome, or ``error`` to the transport error it met, which the plan
    then gets raised where it yielded the step. ``result`` is what the plan returned."""

    result: T

    def __init__(self, plan: Plan[T]) -> None:
        self.plan = plan
        self.reply: Any = None
        self.error: Exception | None = None

    def __iter__(self) -> Iterator[_Step]:
        while True:
            try:
                if self.error is None:
                    step = self.plan.send(self.reply)
                else:
                    step = self.plan.throw(self.error)
            except StopIteration as done:
                self.result = done.value
                return
            self.reply = self.error = None
            yield step


class _Api:
    """The catalog's API as plans (see above), and what a client keeps between calls."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.limits_known: dict[str, int] | None = None

    def answer(self, call: _Call[T]) -> Plan[T]:
        """What ``call``'s answer says, once the catalog is not too busy (a 503 is sent again
        after its Retry-After, BUSY_RETRIES times); a CatalogError otherwise."""
        import httpx

        for attempt in range(BUSY_RETRIES + 1):
            try:
                reply: _Reply = yield call
            except httpx.TransportError as exc:
                raise _unavailable(exc, self.url) from exc
            wait = _busy_wait(reply.response)
            if wait is None or attempt == BUSY_RETRIES:
                break
            yield _Sleep(wait)
        if reply.rows is not None:
            return call.read(reply.rows)
        if call.text and reply.response.is_success:
            return call.read(reply.response.text)
        return call.read(_check(reply.response, self.url))

    def limits(self) -> Plan[dict[str, int]]:
        if self.limits_known is None:
            try:
                self.limits_known = yield from self.answer(_Call("GET", "limits", read=dict))
            except NotInCatalogError:
                self.limits_known = {}
        return self.limits_known

    def page(self, query: Query, offset: int, limit: int, count_facets: bool) -> Plan[Any]:
        params = _page_params(query, offset, limit, count_facets)
        return self.answer(_Call("GET", "search", params=params))

    def results(
        self, query: Query, pages: dict[int, list[File]], number: int, size: int
    ) -> Plan[list[File]]:
        """Page ``number`` of a search's results: from ``pages``, else read and kept there."""
        if number not in pages:
            pages[number] = _files((yield from self.page(query, number * size, size, False)))
        return pages[number]

    def facets(
        self, keys: tuple[str, ...], limit: int, filters: Mapping[str, FacetValue | None]
    ) -> Plan[dict[str, dict[str, int]]]:
        params: list[tuple[str, Any]] = [*Query.build(filters).params, ("limit", 0)]
        params.append(("facet_limit", limit))
        if keys:
            params.append(("facets", ",".join(keys)))
        return self.answer(_Call("GET", "search", params=params, read=_facet_counts))

    def get(self, name: str) -> Plan[FileRecord]:
        return self.answer(_Call("GET", _file_path(name), read=FileRecord.from_json))

    def autocomplete(self, prefix: str, limit: int) -> Plan[list[Node]]:
        params = {"prefix": prefix, "limit": limit}
        return self.answer(_Call("GET", "autocomplete", params=params, read=_completions))

    def browse(self, path: str, limit: int, offset: int) -> Plan[list[Node]]:
        params = {"path": path, "limit": limit, "offset": offset}
        return self.answer(_Call("GET", "tree", params=params, read=_children))

    def stats(self) -> Plan[dict[str, Any]]:
        return self.answer(_Call[dict[str, Any]]("GET", "stats"))

    def health(self) -> Plan[dict[str, Any]]:
        return self.answer(_Call[dict[str, Any]]("GET", "health"))

    def changes(self, since: int, limit: int) -> Plan[Changes]:
        params = {"since": since, "limit": limit}
        return self.answer(_Call("GET", "changes", params=params, read=Changes.from_json))

    def publish(
        self,
        items: Iterator[PublishItem] | AsyncIterator[PublishItem],
        replace: bool,
        token: str | None,
        batch: int | None,
        on_batch: Callable[[PublishBatch], None] | None,
    ) -> Plan[PublishReport]:
        """Batches as the catalog's limits allow, PIPELINE of them in flight: the catalog
        prepares one while it writes the other."""
        headers = _token_headers(token, self.url)
        limits = yield from self.limits()
        run = _PublishRun(Batcher(PublishLimits.from_limits(limits), batch), on_batch)
        params = {"replace": "true"} if replace else {}
        inflight: deque[tuple[Pending, Any]] = deque()
        while True:
            pending: Pending | None = yield _Next(run, items)
            if pending is None:
                if not inflight:
                    break
                yield from self._settle(run, *inflight.popleft())
            elif pending.items:
                call: _Call[Any] = _Call(
                    "POST", "publish", params=params, headers=headers, content=pending.chunks()
                )
                inflight.append((pending, (yield _Start(call))))
                if len(inflight) >= PIPELINE:
                    yield from self._settle(run, *inflight.popleft())
            else:
                run.finish(pending)
        return run.report()

    def _settle(self, run: _PublishRun, pending: Pending, handle: Any) -> Plan[None]:
        import httpx

        try:
            reply: _Reply = yield _Wait(handle)
        except httpx.TransportError as exc:
            raise run.gone(exc, self.url) from exc
        answer = _publish_answer(reply.response, pending, run.batcher, self.url)
        yield _Sleep(answer.wait)
        run.settle(answer, pending)

    def manifest(
        self, what: SearchResults | AsyncSearchResults | Query | str | Iterable[str]
    ) -> Plan[list[ManifestEntry | tuple[str, str]]]:
        limits = {} if _is_search(what) else (yield from self.limits())
        entries: list[ManifestEntry | tuple[str, str]] = []
        for body in _manifest_bodies(what, limits):
            entries += yield from self.answer(
                _Call("POST", "manifests", json=body, lines=parse_line)
            )
        return entries

    def transfer(
        self,
        what: SearchResults | AsyncSearchResults | Query | str | Iterable[str],
        destination: str,
        engine: str,
        token: str | None,
    ) -> Plan[TransferStatus]:
        body = {**_manifest_body(what), "destination": destination, "engine": engine}
        headers = _auth_headers(token, self.url, "submitting a transfer")
        call = _Call("POST", "transfers", json=body, headers=headers, read=TransferStatus.from_json)
        return self.answer(call)

    def transfer_status(self, job_id: int) -> Plan[TransferStatus]:
        return self.answer(_Call("GET", f"transfers/{int(job_id)}", read=TransferStatus.from_json))

    def transfers(self, owner: str | None, limit: int) -> Plan[list[TransferStatus]]:
        params: dict[str, Any] = {"limit": limit}
        if owner is not None:
            params["owner"] = owner
        return self.answer(_Call("GET", "transfers", params=params, read=_jobs))

    def transfer_files(self, job_id: int, state: str | None) -> Plan[list[TransferFile]]:
        files: list[TransferFile] = []
        params: dict[str, Any] = {"limit": TRANSFER_FILES_PAGE, "offset": 0}
        if state is not None:
            params["state"] = state
        while True:
            call = _Call[dict[str, Any]]("GET", f"transfers/{job_id}/files", params=dict(params))
            page = (yield from self.answer(call))["files"]
            files += [TransferFile.from_json(f) for f in page]
            if len(page) < TRANSFER_FILES_PAGE:
                return files
            params["offset"] += len(page)

    def transfer_action(self, job_id: int, action: str, token: str | None) -> Plan[TransferStatus]:
        doing = {"cancel": "cancelling", "retry": "retrying"}[action]
        headers = _auth_headers(token, self.url, f"{doing} a transfer")
        method, path = ("DELETE", "") if action == "cancel" else ("POST", "/retry")
        call = _Call(
            method, f"transfers/{int(job_id)}{path}", headers=headers,
            read=TransferStatus.from_json,
        )  # fmt: skip
        return self.answer(call)

    def to_intake_esm(self, scheme: str | None, local: Mapping[str, str] | None) -> Plan[Any]:
        params = _scheme_param(scheme)
        spec = yield from self.answer(_Call("GET", "export/intake-esm", params=params, read=dict))
        csv = _Call("GET", "export/intake-esm.csv", params=params, text=True, read=str)
        return _esm_datastore(spec, (yield from self.answer(csv)), local)


def _facet_counts(answer: Any) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = answer["facets"]
    return counts


def _completions(answer: Any) -> list[Node]:
    return [Node(**n) for n in answer["completions"]]


def _children(answer: Any) -> list[Node]:
    return [Node(**n) for n in answer["children"]]


def _files(answer: Any) -> list[File]:
    return [File.from_json(r) for r in answer["results"]]


def _file_path(name: str) -> str:
    return "files/" + quote(name.lstrip("/"), safe="/")


def _scheme_param(scheme: str | None) -> dict[str, str]:
    return {"scheme": scheme} if scheme else {}


def _is_search(what: object) -> bool:
    return isinstance(what, SearchResults | AsyncSearchResults | Query | str)


def _manifest_body(what: SearchResults | AsyncSearchResults | Query | str | Iterable[str]) -> Any:
    if isinstance(what, SearchResults | AsyncSearchResults):
        return {"search": what.query.to_string()}
    if isinstance(what, Query):
        return {"search": what.to_string()}
    if isinstance(what, str):
        return {"search": Query.parse(what).to_string()}
    return {"names": list(what)}


def _jobs(answer: Any) -> list[TransferStatus]:
    return [TransferStatus.from_json(job) for job in answer["jobs"]]


#: files read in one request of a job's file list
TRANSFER_FILES_PAGE = 5000


def _esm_datastore(spec: dict[str, Any], text: str, local: Mapping[str, str] | None) -> Any:
    import io

    try:
        import intake_esm
        import pandas
    except ImportError as exc:
        raise missing("intake-esm", "intake", "to_intake_esm()") from exc
    frame = pandas.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    frame = frame.replace("", None)
    if local is not None:
        frame = frame[frame["name"].isin(list(local))].copy()
        frame["path"] = frame["name"].map(dict(local))
        spec = {**spec, "assets": {**spec["assets"], "column_name": "path"}}
        spec["attributes"] = [*spec["attributes"], {"column_name": "path", "vocabulary": ""}]
    # the rows travel with the spec: no second download by intake-esm (and no fsspec HTTP)
    spec = {**spec, "catalog_file": None}
    datastore = intake_esm.esm_datastore  # type: ignore[attr-defined]
    # threaded=False: a dataset's files are opened one by one (netCDF4's HDF5 is not
    # thread-safe: "NetCDF: HDF error", crashes)
    return datastore({"esmcat": spec, "df": frame}, progressbar=False, threaded=False)


#: publish requests in flight: the catalog prepares one while it writes the other
PIPELINE = 2


def _token_headers(token: str | None, base: str) -> dict[str, str]:
    headers = _auth_headers(token, base, "publishing")
    return {**headers, "Content-Type": "application/x-ndjson"}


def _auth_headers(token: str | None, base: str, what: str) -> dict[str, str]:
    token = token or settings().token
    if not token:
        raise CatalogError(
            f"{what} to {base} needs a token (`ndnsci catalog token create NAME` on the "
            "catalog's host): pass token=, or set NDNSCI_TOKEN",
            url=base,
        )
    return {"Authorization": f"Bearer {token}"}


def _publish_answer(
    response: httpx.Response, pending: Pending, batcher: Batcher, base: str
) -> Answer:
    wait = _busy_wait(response)
    if wait is not None and pending.attempts < BUSY_RETRIES:  # too busy now: again, later
        pending.attempts += 1
        return Answer(resend=[pending], wait=wait)
    try:
        body = response.json()
    except ValueError:
        body = None
    answer = interpret(response.status_code, body, pending, batcher)
    if answer is None:
        _check(response, base)  # raises the error the answer is
        raise CatalogError(f"{base} answered a publish request with {body!r}", url=base)
    return answer


class _PublishRun:
    """The bookkeeping of one publish, shared by both clients: which batch goes next (a
    re-sent one before new ones, in order), and the report."""

    def __init__(self, batcher: Batcher, on_batch: Callable[[PublishBatch], None] | None):
        self.batcher = batcher
        self.on_batch = on_batch
        self.queue: deque[Pending] = deque()
        self._report = PublishReport()

    def next(self, items: Iterator[PublishItem]) -> Pending | None:
        if self.queue:
            return self.queue.popleft()
        for item in items:
            full = self.batcher.add(item)
            if full is not None:
                return full
        return self.batcher.flush()

    async def anext(self, items: AsyncIterator[PublishItem]) -> Pending | None:
        if self.queue:
            return self.queue.popleft()
        async for item in items:
            full = self.batcher.add(item)
            if full is not None:
                return full
        return self.batcher.flush()

    def settle(self, answer: Answer, pending: Pending) -> None:
        self.queue.extendleft(reversed(answer.resend))
        if answer.batch is not None:
            self._finished(answer.batch)

    def finish(self, pending: Pending) -> None:
        """A batch left with nothing to send: only its refusals."""
        self._finished(PublishBatch(items=[], lines=[], refused=pending.refused))

    def _finished(self, batch: PublishBatch) -> None:
        self._report.requests += 1 if batch.items else 0
        self._report.add(batch)
        if self.on_batch is not None:
            self.on_batch(batch)

    def gone(self, exc: Exception, base: str) -> CatalogUnavailableError:
        """The error for a catalog that answered ``/limits`` and then stopped answering: one
        message whether it dropped a request or refused the next connection (a killed server
        does either, by timing), saying what stays published."""
        return CatalogUnavailableError(
            f"the catalog at {base} stopped answering during the publish "
            f"({type(exc).__name__}: {exc or 'no answer'}); the {self._report.published} "
            "records it confirmed stay published: run the same command again for the rest",
            url=base,
        )

    def report(self) -> PublishReport:
        report = self._report
        report.refused = sorted([*self.batcher.refused, *report.refused], key=lambda r: r.line)
        return report


# --- the clients ---------------------------------------------------------------------------------


def _httpx() -> Any:
    try:
        import httpx
    except ImportError as exc:
        raise missing("httpx", None, "the catalog client") from exc
    return httpx


def _verify(url: str) -> Any:
    """httpx's ``verify`` for a catalog at ``url``: the certificate of ``$NDNSCI_CATALOG_CERT``
    for an https one when it is set (a site's own parts), else the system's CAs."""
    from ndnsci.base.environment import catalog_cert

    cert = catalog_cert()
    if cert is None or not url.startswith("https://"):
        return True
    from ndnsci.base import tls

    return tls.pinned(cert)


def _page_size(requested: int) -> int:
    return max(1, min(requested, 1000))  # the catalog's own cap


class _BaseCatalog:
    """What :class:`Catalog` and :class:`AsyncCatalog` share: their settings and the
    :class:`_Api` whose plans they carry out."""

    def __init__(self, url: str | None, page_size: int, token: str | None) -> None:
        self.url, self.page_size = catalog_url(url), _page_size(page_size)
        self.token = token
        self._api = _Api(self.url)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


class Catalog(_BaseCatalog):
    """A client of an ndnsci catalog (``ndnsci catalog serve`` or ``ndnsci up``).

    ``url`` defaults to ``$NDNSCI_CATALOG``, else http://127.0.0.1:8000. Use it as a context
    manager, or call :meth:`close`, to release its connections.

    Example::

        >>> cat = ndnsci.Catalog("http://127.0.0.1:8000")
        >>> found = cat.search(model="HadCM3", variable="tas", experiment="historical")
        >>> len(found), found[0].name
        (2, '/CMIP5/output1/MOHC/HadCM3/historical/mon/atmos/Amon/r1i1p1/...')
        >>> cat.facets("model")["model"]
        {'CanESM2': 8, 'HadCM3': 9, 'MIROC5': 6}

    Raises:
        CatalogUnavailableError: (on the first request) nothing answers at ``url``.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        timeout: float = 30.0,
        page_size: int = PAGE_SIZE,
        token: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        client = _httpx()  # first: without httpx, say what to install before anything else
        super().__init__(url, page_size, token)
        self._http: httpx.Client = client.Client(
            base_url=self.url + API, timeout=timeout, transport=transport, follow_redirects=True,
            verify=_verify(self.url),
        )  # fmt: skip

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # carrying plans out -------------------------------------------------------------------------

    def _run(self, plan: Plan[T], pool: ThreadPoolExecutor | None = None) -> T:
        """What ``plan`` returns, its steps carried out one by one (publish batches are posted
        in ``pool``'s threads)."""
        import httpx

        walk = _Walk(plan)
        for step in walk:
            try:
                walk.reply = self._step(step, pool)
            except httpx.TransportError as exc:
                walk.error = exc
        return walk.result

    def _step(self, step: _Step, pool: ThreadPoolExecutor | None) -> Any:
        if isinstance(step, _Call):
            return self._send(step)
        if isinstance(step, _Sleep):
            time.sleep(step.seconds)
            return None
        if isinstance(step, _Next):
            return step.run.next(step.items)  # type: ignore[arg-type]  # Catalog.publish's
        if isinstance(step, _Wait):
            return step.handle.result()
        assert pool is not None, "a publish is run with its pool"
        return self._start(step.call, pool)

    def _send(self, call: _Call[Any]) -> _Reply:
        response = self._http.send(call.request(self._http), stream=True)
        try:
            if call.lines is None or not response.is_success:
                response.read()
                return _Reply(response)
            rows = _Rows(call.lines)
            for line in response.iter_lines():
                rows.add(line)
            return _Reply(response, rows.rows)
        finally:
            response.close()

    def _start(self, call: _Call[Any], pool: ThreadPoolExecutor) -> Future[_Reply]:
        """Send ``call`` in a thread of ``pool``; return once its body is sent."""
        import threading

        sent = threading.Event()

        def body() -> Iterator[bytes]:
            yield from call.content  # type: ignore[misc]  # a publish batch's chunks
            sent.set()

        future = pool.submit(self._send, call.sending(body()))
        while not sent.wait(0.05) and not future.done():
            pass
        return future

    # the API ------------------------------------------------------------------------------------

    def limits(self) -> dict[str, int]:
        """What one request may carry (``GET /limits``), asked once; empty from a catalog that
        does not say."""
        return self._run(self._api.limits())

    def search(
        self,
        q: str | None = None,
        *,
        prefix: str | None = None,
        start: str | None = None,
        end: str | None = None,
        scheme: FacetValue | None = None,
        exclude: Mapping[str, FacetValue] | None = None,
        sort: str | None = None,
        **facets: FacetValue | None,
    ) -> SearchResults:
        """Files matching every filter, as a lazily paged :class:`SearchResults`.

        Facets are keyword arguments; a list means any of the values (``model=["HadCM3",
        "CanESM2"]``); ``exclude`` drops values; ``q`` is free text; ``prefix`` an NDN name
        prefix; ``start``/``end`` keep files whose time coverage overlaps (``"1990"``,
        ``"2005-12"``). Nothing is asked until the results are used, then one page at a time.

        Example::

            >>> found = cat.search(model="HadCM3", variable=["tas", "pr"], start="2000")
            >>> len(found)
            6
            >>> [f.facets["variable"] for f in found]
            ['pr', 'pr', 'pr', 'tas', 'tas', 'tas']

        Raises:
            UnknownFacetError: a facet the catalog does not know (``.valid_facets`` lists them).
            QueryError: another malformed parameter (a bad time bound, prefix or sort).
            CatalogUnavailableError: nothing answers at the catalog's URL.
        """
        query = Query.build(
            facets, q=q, prefix=prefix, start=start, end=end, scheme=scheme, exclude=exclude,
            sort=sort,
        )  # fmt: skip
        return SearchResults(self, query)

    def query(self, query: Query | str) -> SearchResults:
        """Like :meth:`search`, from a :class:`Query` or ``'model=HadCM3 variable=tas'``."""
        return SearchResults(self, query if isinstance(query, Query) else Query.parse(query))

    def facets(
        self, *keys: str, limit: int = 100, **filters: FacetValue | None
    ) -> dict[str, dict[str, int]]:
        """Value counts of facets (all of them, or ``keys``) among files matching ``filters``.

        The counts of a facet ignore that facet's own filter (as ESGF's do), so they show what
        another choice would give.

        Example::

            >>> cat.facets("experiment", model="HadCM3")
            {'experiment': {'historical': 6, 'rcp45': 3}}

        Raises:
            UnknownFacetError: a filter or a key names a facet the catalog does not know.
            CatalogUnavailableError: nothing answers at the catalog's URL.
        """
        return self._run(self._api.facets(keys, limit, filters))

    def get(self, name: str) -> FileRecord:
        """The full record of the file ``name``: facets, corrections, header metadata.

        Raises:
            NotInCatalogError: no published file has this name.
            QueryError: ``name`` is not a valid NDN name.
        """
        return self._run(self._api.get(name))

    def autocomplete(self, prefix: str = "/", limit: int = 50) -> list[Node]:
        """The next name components under ``prefix`` (which may end inside a component).

        Example::

            >>> [n.component for n in cat.autocomplete("/CMIP5/output1/MO")]
            ['MOHC']
        """
        return self._run(self._api.autocomplete(prefix, limit))

    def browse(self, path: str = "/", limit: int = 100, offset: int = 0) -> list[Node]:
        """One level of the name tree under ``path``: directories first, then files.

        Raises:
            NotInCatalogError: no name starts with ``path``.
        """
        return self._run(self._api.browse(path, limit, offset))

    def stats(self) -> dict[str, Any]:
        """Totals: files, bytes, name roots, facets."""
        return self._run(self._api.stats())

    def health(self) -> dict[str, Any]:
        """The service and its database answer; how busy it is."""
        return self._run(self._api.health())

    def changes(self, since: int = 0, limit: int = 1000) -> Changes:
        """Publications and retractions after ``since`` (a seq), in order, ``limit`` at most.

        Example::

            >>> page = cat.changes(since=0, limit=2)
            >>> [(c.seq, c.op) for c in page.changes], page.next
            ([(1, 'publish'), (2, 'publish')], 2)
        """
        return self._run(self._api.changes(since, limit))

    # publishing ---------------------------------------------------------------------------------

    def publish(
        self,
        records: Iterable[PublishItem],
        *,
        replace: bool = False,
        token: str | None = None,
        batch: int | None = None,
        on_batch: Callable[[PublishBatch], None] | None = None,
    ) -> PublishReport:
        """Publish records in the batches the catalog accepts (its :meth:`limits`).

        ``records`` are JSON lines (``ndnsci translate --json``: passed on unparsed), mappings,
        or described files (``sdk.describe.DescribedFile``), read as they come: any number, in
        bounded memory. A name another file already has is a collision: the published record
        stays (``replace=True``: it is replaced) and the report lists it. Bad records are
        reported with their line and source, the others published. ``on_batch`` is told of
        each request's outcome once it is committed; ``batch`` caps its records.

        Example::

            >>> with open("names.jsonl", "rb") as lines:
            ...     report = cat.publish(lines, token=token)
            >>> report.inserted, [r.line for r in report.refused]
            (398920, [50001])

        Raises:
            CatalogError: no token (``token=``, ``Catalog(token=)`` or ``$NDNSCI_TOKEN``), it
                is refused, or a request fails; committed batches stay published.
            CatalogUnavailableError: the catalog cannot be reached, or dropped the connection.
        """
        from concurrent.futures import ThreadPoolExecutor

        plan = self._api.publish(iter(records), replace, token or self.token, batch, on_batch)
        with ThreadPoolExecutor(PIPELINE, thread_name_prefix="ndnsci-publish") as pool:
            return self._run(plan, pool)

    # manifests and exports ----------------------------------------------------------------------

    def manifest(
        self, what: SearchResults | Query | str | Iterable[str]
    ) -> list[ManifestEntry | tuple[str, str]]:
        """What to fetch for a search (or a list of names): one request for a search, names in
        pieces of the size the catalog takes (its :meth:`limits`).

        Returns a :class:`ManifestEntry` per file; for a name the catalog does not hold,
        ``(name, reason)`` instead, so a caller can report it and go on.

        Raises:
            QueryError, UnknownFacetError: the search is refused.
        """
        return self._run(self._api.manifest(what))

    def to_intake_esm(
        self, scheme: str | None = "cmip5", *, local: Mapping[str, str] | None = None
    ) -> Any:
        """The catalog (one scheme's files) as an intake-esm ``esm_datastore``.

        With ``local`` (NDN name -> local path, e.g. ``FetchReport.local``), only those files
        are kept and their local paths become the assets, so ``to_dataset_dict()`` opens them.

        Open its datasets one at a time (``esm[key].to_dask()``, with ``ITK_ESM_THREADING=False``
        for what ``esm.search()`` returns): intake-esm opens files in threads otherwise, which the
        HDF5 library of the netCDF4 wheels does not survive.

        Example::

            >>> report = ndnsci.download(cat.search(model="HadCM3"), "data")
            >>> esm = cat.to_intake_esm("cmip5", local=report.local)
            >>> datasets = {key: esm[key].to_dask() for key in esm.keys()}

        Raises:
            MissingDependencyError: intake-esm (or pandas) is not installed.
        """
        return self._run(self._api.to_intake_esm(scheme, local))

    # transfer jobs ------------------------------------------------------------------------------

    def transfer(
        self,
        what: SearchResults | Query | str | Iterable[str],
        destination: str,
        *,
        engine: str = "auto",
        token: str | None = None,
    ) -> Transfer:
        """Submit a job copying a search's files (or a list of names) into ``destination``, a
        folder below the catalog site's transfer root; the site's agent runs it.

        Example::

            >>> job = cat.transfer(cat.search(model="HadGEM2-ES", variable="tas"), "ucla/tas")
            >>> job.wait(progress=lambda s: print(s.summary())).state
            'done'

        Raises:
            CatalogError: no token, or it is refused; a name the catalog does not hold
                (nothing is submitted: ``extra["names"]`` lists them), a bad destination.
        """
        plan = self._api.transfer(what, destination, engine, token or self.token)
        return Transfer(self, self._run(plan).id)

    def transfers(self, owner: str | None = None, limit: int = 100) -> list[TransferStatus]:
        """The newest jobs first (those of one token's ``owner`` name when given)."""
        return self._run(self._api.transfers(owner, limit))

    def transfer_status(self, job_id: int) -> TransferStatus:
        """One job's status (NotInCatalogError: there is no such job)."""
        return self._run(self._api.transfer_status(job_id))

    def transfer_files(self, job_id: int, state: str | None = None) -> list[TransferFile]:
        """A job's files in order (those in ``state`` when given), each with its last error."""
        return self._run(self._api.transfer_files(job_id, state))

    def cancel_transfer(self, job_id: int, *, token: str | None = None) -> TransferStatus:
        """Stop a job: its waiting files at once, its running ones within a second or two."""
        return self._run(self._api.transfer_action(job_id, "cancel", token or self.token))

    def retry_transfer(self, job_id: int, *, token: str | None = None) -> TransferStatus:
        """Put a job's failed and cancelled files back, their attempts counted afresh."""
        return self._run(self._api.transfer_action(job_id, "retry", token or self.token))


class AsyncCatalog(_BaseCatalog):
    """:class:`Catalog` for asyncio code (notebooks, services): the same methods, awaited.

    Example::

        >>> async with ndnsci.AsyncCatalog() as cat:
        ...     found = await cat.search(model="HadCM3")
        ...     async for f in found:
        ...         print(f.name)

    Raises:
        CatalogUnavailableError: (on the first request) nothing answers at ``url``.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        timeout: float = 30.0,
        page_size: int = PAGE_SIZE,
        token: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        client = _httpx()  # first: without httpx, say what to install before anything else
        super().__init__(url, page_size, token)
        self._http: httpx.AsyncClient = client.AsyncClient(
            base_url=self.url + API, timeout=timeout, transport=transport, follow_redirects=True,
            verify=_verify(self.url),
        )  # fmt: skip

    async def __aenter__(self) -> AsyncCatalog:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # carrying plans out: Catalog's, awaited -----------------------------------------------------

    async def _arun(self, plan: Plan[T]) -> T:
        """:meth:`Catalog._run`; the posts of a publish that fails are cancelled."""
        import httpx

        walk = _Walk(plan)
        started: list[asyncio.Task[_Reply]] = []
        try:
            for step in walk:
                try:
                    walk.reply = await self._astep(step, started)
                except httpx.TransportError as exc:
                    walk.error = exc
        finally:
            for task in started:
                task.cancel()
        return walk.result

    async def _astep(self, step: _Step, started: list[asyncio.Task[_Reply]]) -> Any:
        import asyncio

        if isinstance(step, _Call):
            return await self._asend(step)
        if isinstance(step, _Sleep):
            await asyncio.sleep(step.seconds)
            return None
        if isinstance(step, _Next):
            return await step.run.anext(step.items)  # type: ignore[arg-type]  # publish's
        if isinstance(step, _Wait):
            return await step.handle
        started.append(await self._astart(step.call))
        return started[-1]

    async def _asend(self, call: _Call[Any]) -> _Reply:
        response = await self._http.send(call.request(self._http), stream=True)
        try:
            if call.lines is None or not response.is_success:
                await response.aread()
                return _Reply(response)
            rows = _Rows(call.lines)
            async for line in response.aiter_lines():
                rows.add(line)
            return _Reply(response, rows.rows)
        finally:
            await response.aclose()

    async def _astart(self, call: _Call[Any]) -> asyncio.Task[_Reply]:
        """:meth:`Catalog._start`, in a task."""
        import asyncio

        sent = asyncio.Event()

        async def body() -> AsyncIterator[bytes]:
            for chunk in call.content:  # type: ignore[union-attr]  # a publish batch's chunks
                yield chunk
            sent.set()

        task = asyncio.create_task(self._asend(call.sending(body())))
        waiter = asyncio.create_task(sent.wait())
        await asyncio.wait((task, waiter), return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        return task

    # the API ------------------------------------------------------------------------------------

    async def limits(self) -> dict[str, int]:
        """:meth:`Catalog.limits`."""
        return await self._arun(self._api.limits())

    async def search(
        self,
        q: str | None = None,
        *,
        prefix: str | None = None,
        start: str | None = None,
        end: str | None = None,
        scheme: FacetValue | None = None,
        exclude: Mapping[str, FacetValue] | None = None,
        sort: str | None = None,
        **facets: FacetValue | None,
    ) -> AsyncSearchResults:
        """:meth:`Catalog.search`; the first page is read at once, so ``len()`` works.

        Raises:
            UnknownFacetError, QueryError, CatalogUnavailableError: as :meth:`Catalog.search`.
        """
        query = Query.build(
            facets, q=q, prefix=prefix, start=start, end=end, scheme=scheme, exclude=exclude,
            sort=sort,
        )  # fmt: skip
        return await self.query(query)

    async def query(self, query: Query | str) -> AsyncSearchResults:
        """:meth:`Catalog.query`; the first page is read at once."""
        query = query if isinstance(query, Query) else Query.parse(query)
        first = await self._arun(self._api.page(query, 0, self.page_size, True))
        return AsyncSearchResults(self, query, first)

    async def facets(
        self, *keys: str, limit: int = 100, **filters: FacetValue | None
    ) -> dict[str, dict[str, int]]:
        """:meth:`Catalog.facets`."""
        return await self._arun(self._api.facets(keys, limit, filters))

    async def get(self, name: str) -> FileRecord:
        """:meth:`Catalog.get`."""
        return await self._arun(self._api.get(name))

    async def autocomplete(self, prefix: str = "/", limit: int = 50) -> list[Node]:
        """:meth:`Catalog.autocomplete`."""
        return await self._arun(self._api.autocomplete(prefix, limit))

    async def browse(self, path: str = "/", limit: int = 100, offset: int = 0) -> list[Node]:
        """:meth:`Catalog.browse`."""
        return await self._arun(self._api.browse(path, limit, offset))

    async def stats(self) -> dict[str, Any]:
        """:meth:`Catalog.stats`."""
        return await self._arun(self._api.stats())

    async def health(self) -> dict[str, Any]:
        """:meth:`Catalog.health`."""
        return await self._arun(self._api.health())

    async def changes(self, since: int = 0, limit: int = 1000) -> Changes:
        """:meth:`Catalog.changes`."""
        return await self._arun(self._api.changes(since, limit))

    async def publish(
        self,
        records: Iterable[PublishItem] | AsyncIterable[PublishItem],
        *,
        replace: bool = False,
        token: str | None = None,
        batch: int | None = None,
        on_batch: Callable[[PublishBatch], None] | None = None,
    ) -> PublishReport:
        """:meth:`Catalog.publish` (``records`` may also be an async iterable).

        Raises:
            CatalogError, CatalogUnavailableError: as :meth:`Catalog.publish`.
        """
        plan = self._api.publish(_aiter(records), replace, token or self.token, batch, on_batch)
        return await self._arun(plan)

    async def manifest(
        self, what: AsyncSearchResults | Query | str | Iterable[str]
    ) -> list[ManifestEntry | tuple[str, str]]:
        """:meth:`Catalog.manifest`."""
        return await self._arun(self._api.manifest(what))

    async def to_intake_esm(
        self, scheme: str | None = "cmip5", *, local: Mapping[str, str] | None = None
    ) -> Any:
        """:meth:`Catalog.to_intake_esm`.

        Raises:
            MissingDependencyError: intake-esm (or pandas) is not installed.
        """
        return await self._arun(self._api.to_intake_esm(scheme, local))

    # transfer jobs ------------------------------------------------------------------------------

    async def transfer(
        self,
        what: AsyncSearchResults | Query | str | Iterable[str],
        destination: str,
        *,
        engine: str = "auto",
        token: str | None = None,
    ) -> AsyncTransfer:
        """:meth:`Catalog.transfer`."""
        plan = self._api.transfer(what, destination, engine, token or self.token)
        return AsyncTransfer(self, (await self._arun(plan)).id)

    async def transfers(self, owner: str | None = None, limit: int = 100) -> list[TransferStatus]:
        """:meth:`Catalog.transfers`."""
        return await self._arun(self._api.transfers(owner, limit))

    async def transfer_status(self, job_id: int) -> TransferStatus:
        """:meth:`Catalog.transfer_status`."""
        return await self._arun(self._api.transfer_status(job_id))

    async def transfer_files(self, job_id: int, state: str | None = None) -> list[TransferFile]:
        """:meth:`Catalog.transfer_files`."""
        return await self._arun(self._api.transfer_files(job_id, state))

    async def cancel_transfer(self, job_id: int, *, token: str | None = None) -> TransferStatus:
        """:meth:`Catalog.cancel_transfer`."""
        return await self._arun(self._api.transfer_action(job_id, "cancel", token or self.token))

    async def retry_transfer(self, job_id: int, *, token: str | None = None) -> TransferStatus:
        """:meth:`Catalog.retry_transfer`."""
        return await self._arun(self._api.transfer_action(job_id, "retry", token or self.token))


async def _aiter(records: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterator[Any]:
    if isinstance(records, AsyncIterable):
        async for item in records:
            yield item
    else:
        for item in records:
            yield item


# --- result sets ---------------------------------------------------------------------------------


class SearchResults(AbcSequence[File]):
    """The files of a search, read from the catalog one page at a time.

    A sequence: ``len(found)``, ``found[0]``, ``found[-3:]``, ``for f in found``. Pages are kept
    once read. ``facets`` holds the value counts of the whole result set.

    Example::

        >>> found = cat.search(experiment="historical")
        >>> found.facets["model"]
        {'CanESM2': 3, 'HadCM3': 4, 'MIROC5': 3}
        >>> df = found.to_dataframe()   # one row per file, one column per facet (pandas)
    """

    def __init__(self, catalog: Catalog, query: Query) -> None:
        self.catalog = catalog
        self.query = query
        self._pages: dict[int, list[File]] = {}
        self._first: dict[str, Any] | None = None

    def _load_first(self) -> dict[str, Any]:
        if self._first is None:
            page = self.catalog._api.page(self.query, 0, self.catalog.page_size, True)
            first = self.catalog._run(page)
            self._pages[0] = _files(first)
            self._first = first
        return self._first

    def _page(self, number: int) -> list[File]:
        self._load_first()
        pages = self.catalog._api.results(self.query, self._pages, number, self.catalog.page_size)
        return self.catalog._run(pages)

    def __len__(self) -> int:
        return int(self._load_first()["total"])

    @property
    def facets(self) -> dict[str, dict[str, int]]:
        """Value counts per facet over the whole result set (not only the first page)."""
        counts: dict[str, dict[str, int]] = self._load_first()["facets"]
        return counts

    @overload
    def __getitem__(self, index: int) -> File: ...

    @overload
    def __getitem__(self, index: slice) -> list[File]: ...

    def __getitem__(self, index: int | slice) -> File | list[File]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        total = len(self)
        if index < 0:
            index += total
        if not 0 <= index < total:
            raise IndexError(f"result {index} of {total}")
        page, row = divmod(index, self.catalog.page_size)
        files = self._page(page)
        if row >= len(files):  # the catalog shrank since the first page
            raise IndexError(f"result {index}: the catalog changed while reading")
        return files[row]

    def __iter__(self) -> Iterator[File]:
        total = len(self)
        for page in range(-(-total // self.catalog.page_size)):
            files = self._page(page)
            yield from files
            if len(files) < self.catalog.page_size:
                return

    def __repr__(self) -> str:
        return f"<SearchResults {len(self)} files for {self.query}>"

    @property
    def names(self) -> list[str]:
        return [f.name for f in self]

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per file: name, filename, scheme, size, sha256, time span, every facet.

        Raises:
            MissingDependencyError: pandas is not installed.
        """
        return files_to_dataframe(list(self))


def files_to_dataframe(files: Iterable[File]) -> pandas.DataFrame:
    try:
        import pandas
    except ImportError as exc:
        raise missing("pandas", "analysis", "to_dataframe()") from exc
    rows = [{**{k: getattr(f, k) for k in FIXED_COLUMNS}, **f.facets} for f in files]
    return pandas.DataFrame(rows, columns=_columns(rows))


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    columns = list(FIXED_COLUMNS)
    for row in rows:
        columns += [k for k in row if k not in columns]
    return columns


class AsyncSearchResults:
    """The files of an asynchronous search: ``len()``, ``async for``, ``await .all()``."""

    def __init__(self, catalog: AsyncCatalog, query: Query, first: dict[str, Any]) -> None:
        self.catalog = catalog
        self.query = query
        self.total = int(first["total"])
        self.facets: dict[str, dict[str, int]] = first["facets"]
        self._pages: dict[int, list[File]] = {0: _files(first)}

    def __len__(self) -> int:
        return self.total

    def __repr__(self) -> str:
        return f"<AsyncSearchResults {self.total} files for {self.query}>"

    async def page(self, number: int) -> list[File]:
        pages = self.catalog._api.results(self.query, self._pages, number, self.catalog.page_size)
        return await self.catalog._arun(pages)

    async def __aiter__(self) -> AsyncIterator[File]:
        for number in range(-(-self.total // self.catalog.page_size)):
            files = await self.page(number)
            for f in files:
                yield f
            if len(files) < self.catalog.page_size:
                return

    async def all(self) -> list[File]:
        """Every file of the result set."""
        return [f async for f in self]

    async def to_dataframe(self) -> pandas.DataFrame:
        """:meth:`SearchResults.to_dataframe`."""
        return files_to_dataframe(await self.all())


def dumps(files: Iterable[File]) -> Iterator[str]:
    """JSON lines of files (``ndnsci search --json``)."""
    for f in files:
        yield json.dumps(f.to_dict())
