"""Request and response bodies of the REST API (kept apart from the ORM models)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator


class FileSummary(BaseModel):
    name: str
    filename: str | None = Field(description="the canonical file name (last name component)")
    original: str = Field(
        description="the file name before corrections: the last component of what the "
        "translator was given (the canonical file name when that is not known)"
    )
    scheme: str
    size: int | None
    sha256: str | None
    facets: dict[str, str | None]
    time_start: str | None
    time_end: str | None
    site: str | None = Field(
        description="the site of the federation that published the file (its origin; the "
        "'site' facet); null in a catalog that has no site name"
    )


class SearchResponse(BaseModel):
    total: int
    limit: int
    offset: int
    results: list[FileSummary]
    facets: dict[str, dict[str, int]] = Field(
        description="per facet, value -> number of files; the counts of a facet apply every "
        "filter except that facet's own (ESGF style), at most facet_limit values by count"
    )


class Node(BaseModel):
    component: str
    name: str
    count: int = Field(description="files under this name (1 for a file)")
    leaf: bool = Field(description="true when the name is a file, not a prefix")


class AutocompleteResponse(BaseModel):
    prefix: str
    completions: list[Node]


class TreeResponse(BaseModel):
    path: str
    count: int
    children: list[Node]


class HistoryEntry(BaseModel):
    version: str | None
    seq: int
    replaced_at: str
    size: int | None
    sha256: str | None


class ReplicaEntry(BaseModel):
    site: str | None = Field(description="the site holding the copy")
    path: str = Field(description="below the site's transfer root")
    size: int | None
    sha256: str | None
    created: float = Field(description="Unix seconds")


class FileRecord(FileSummary):
    original_path: str | None = Field(
        description="the file's path below the directory it was published from, before "
        "corrections (null when it was published by name only)"
    )
    mtime: float | None
    version: str | None
    corrections: list[dict[str, str]]
    metadata: dict[str, Any] | None
    published_at: str
    seq: int
    history: list[HistoryEntry]
    urls: dict[str, str] = Field(
        default_factory=dict,
        description="where to read the file besides its NDN name: 'http' (the HTTP gateway) "
        "and, for a CMS file when the catalog knows an XRootD server on NDN (NDNSCI_XROOTD_URL), "
        "'xrootd' (root://HOST:PORT//store/...)",
    )
    replicas: list[ReplicaEntry] = Field(
        default_factory=list,
        description="verified copies transfer jobs made at this site (besides the origin's)",
    )


class ManifestRequest(BaseModel):
    names: list[str] | None = Field(
        default=None,
        description="NDN names to include (at most max_manifest_names of GET /limits)",
    )
    search: str | None = Field(
        default=None,
        max_length=8192,
        description="a /search query string, e.g. 'model=HadCM3&variable=tas'",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> ManifestRequest:
        if (self.names is None) == (self.search is None):
            raise ValueError("give exactly one of 'names' or 'search'")
        return self


class CollisionEntry(BaseModel):
    """Two different files with one name (docs/catalog.md, "Name collisions")."""

    line: int = Field(description="the line of this request that collided")
    name: str
    published: str | None = Field(
        description="where the published record came from: its original path, else its "
        "original file name"
    )
    given: str | None = Field(description="the same for the record of this request")
    replaced: bool = Field(
        description="true when the record of this request replaced the published one "
        "(replace=true); false when the published one was kept and this line not published"
    )


class NameConflict(BaseModel):
    name: str
    held_by: str | None


class PublishResponse(BaseModel):
    inserted: int
    replaced: int
    unchanged: int
    last_seq: int
    collisions: list[CollisionEntry] = Field(
        default_factory=list,
        description="names of this request that another file already has, in line order",
    )
    conflicts: int = Field(
        default=0,
        description="records refused because another site of the federation holds the name "
        "(listed by GET /conflicts)",
    )
    conflicting: list[NameConflict] = Field(
        default_factory=list, description="those records: each name and the site holding it"
    )


class RetractResponse(BaseModel):
    name: str
    seq: int


class ChangeEntry(BaseModel):
    seq: int
    op: str = Field(description="'publish' (insert or replace) or 'retract'")
    name: str
    version: str | None
    at: str


class ChangesResponse(BaseModel):
    since: int
    last_seq: int
    changes: list[ChangeEntry]
    next: int = Field(description="pass as since= to read the following page")


class SiteEntry(BaseModel):
    name: str
    prefix: str = Field(description="the site's NDN prefix; its changes are under <prefix>/catalog")
    public_key: str = Field(description="the site's Ed25519 public key, hex")
    local: bool = Field(description="true for this catalog's own site")
    boot: int = Field(description="the site's bootstrap time (State Vector Sync)")
    applied: int = Field(
        description="change batches of the site applied here (the local site: published)"
    )
    refused: int = Field(description="batches of the site refused (forged, tampered, malformed)")
    last_error: str | None
    added_at: str


class SitesResponse(BaseModel):
    local: SiteEntry | None
    trusted: list[SiteEntry]


class ConflictEntry(BaseModel):
    name: str
    held_by: str | None = Field(description="the site whose record the catalog keeps")
    claimed_by: str | None = Field(description="the site whose publication was refused")
    op: str
    at: str


class ConflictsResponse(BaseModel):
    total: int
    conflicts: list[ConflictEntry]


class HealthResponse(BaseModel):
    status: str
    database: str
    instance: str = Field(description="this server process (changes at every start)")
    load: dict[str, dict[str, int]] = Field(
        description="per lane (reads, writes): turns, running, waiting, refused (503) so far"
    )


class LimitsResponse(BaseModel):
    """What one request may carry (larger is refused: 413, or 422 naming the record)."""

    max_publish_records: int = Field(description="records in one POST /publish")
    max_publish_bytes: int = Field(description="bytes of one POST /publish body")
    max_body_bytes: int = Field(description="bytes of any other request body")
    max_manifest_names: int = Field(description="names in one POST /manifests")
    max_record_bytes: int = Field(description="bytes of one record (one JSON line)")
    max_name_chars: int = Field(description="characters of a name or a relative path")
    max_value_chars: int = Field(
        description="characters of a facet value, a correction's message, a version, ..."
    )
    max_facets: int = Field(description="facets of one record")
    max_corrections: int = Field(description="corrections of one record")
    max_metadata_bytes: int = Field(description="bytes of a record's metadata as JSON")


class StatsResponse(BaseModel):
    files: int
    bytes: int
    last_seq: int
    roots: dict[str, int]
    facets: list[str]
    database: str


class RefusedLine(BaseModel):
    line: int
    detail: str


class ErrorResponse(BaseModel):
    """Every error answer: a message a person can act on, and details for programs."""

    detail: str
    valid_facets: list[str] | None = Field(default=None, description="on an unknown facet")
    code: str | None = Field(
        default=None,
        description="a stable identifier of the error where a program must tell it apart: "
        "'batch-too-large' (413: send smaller batches), 'invalid-records' (422)",
    )
    line: int | None = Field(default=None, description="the first refused line of a publish body")
    refused: list[RefusedLine] | None = Field(
        default=None, description="every refused line of a publish body (none was published)"
    )
    limit: int | None = Field(default=None, description="on a body too large (413): its limit")
    max_records: int | None = Field(default=None, description="on 'batch-too-large'")
    max_bytes: int | None = Field(default=None, description="on 'batch-too-large'")
    errors: list[dict[str, Any]] | None = Field(
        default=None, description="each invalid parameter or field"
    )


# --- transfer jobs ------------------------------------------------------------------------------


class TransferRequest(ManifestRequest):
    """A new transfer job: the files (``names`` or a ``search``, as for a manifest) and the
    folder at the site they go to."""

    destination: str = Field(
        max_length=1024,
        description="a folder relative to the site's transfer root; each file goes to its "
        "DRS path below it",
    )
    engine: str = Field(
        default="auto",
        description="auto (NDN-DPDK where the native plane reaches the name, else ndnsci's "
        "own), python or ndn-dpdk",
    )


class TransferCounts(BaseModel):
    pending: int
    running: int
    done: int
    failed: int
    cancelled: int


class TransferJobResponse(BaseModel):
    """A transfer job: its files per state, bytes, average rate since its first file started,
    and the engines that moved its finished files."""

    id: int
    owner: str
    destination: str
    engine: str
    selection: dict[str, Any]
    state: str = Field(description="queued, running, done, failed or cancelled")
    created: float = Field(description="Unix seconds")
    updated: float
    files: int
    bytes: int = Field(description="the sizes the catalog gives for the files")
    bytes_done: int
    counts: TransferCounts
    engines: dict[str, int] = Field(description="finished files per engine")
    started: float | None
    finished: float | None
    rate: float | None = Field(description="bytes per second since the first file started")
    eta: float | None = Field(description="seconds left at that rate")
    unknown_sizes: int = Field(description="files whose size the catalog does not give")


class TransferJobsResponse(BaseModel):
    jobs: list[TransferJobResponse]


class TransferFileEntry(BaseModel):
    name: str
    path: str
    size: int | None
    sha256: str | None
    state: str
    bytes_done: int
    attempts: int
    engine: str | None
    error: str | None
    retry_at: float | None
    started: float | None
    finished: float | None


class TransferFilesResponse(BaseModel):
    files: list[TransferFileEntry]
