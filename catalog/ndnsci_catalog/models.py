"""Database tables (SQLAlchemy 2 typed models).

Layout, and why:

- ``files``: one row per published name (the current version). ``facets`` keeps the record's
  facet dict as published; ``packed`` holds what the in-memory facet index
  (:mod:`ndnsci_catalog.facetindex`) needs of the file besides ``seq`` and ``scheme``: size,
  time coverage as integers and the ids of its ``facet_values`` (layout in
  :mod:`ndnsci_catalog.bulk`), so the index loads a million files with one scan of four short
  columns. Filtering and counting happen in that index.
- ``facet_values``: the dictionary of (key, value) pairs (ids never change, rows are never
  deleted, so an id in ``packed`` stays valid). Counts are the index's business.
- ``tree_nodes``: every directory-like prefix of the names with the number of files under it,
  maintained on publish: autocomplete and browsing read the children of one parent as a range
  of the primary key (parent, component).
- ``files_fts``: free text (created by the migration per backend: a contentless FTS5 table on
  SQLite, the index without a copy of the documents; a tsvector with a GIN index on
  PostgreSQL); see :mod:`ndnsci_catalog.fulltext`.
- ``changes``: the ordered change feed for mirrors and for the facet index (``file_id`` says
  which row to re-read); ``catalog_state`` (one row) holds the last sequence number and running
  totals, and its row lock serialises publishers so sequence numbers
  are committed in order (a mirror reading ``since=N`` never misses a late commit).
- ``file_history``: previous versions of replaced or retracted records.
- ``tokens``: SHA-256 hashes of the publish tokens, never the tokens.
- federation (docs/federation.md): ``files.site`` and ``changes.site`` say which site published
  a record (its origin; NULL for a catalog that never named itself); ``sites`` holds this
  catalog's own identity (``local``) and the trust list with how far each site's changes were
  applied; ``change_batches`` the signed batches of this site's own changes, as other sites
  fetch them; ``conflicts`` every claim on a name another site holds (never merged).
- transfer jobs (:mod:`ndnsci_catalog.transfers`): ``transfer_jobs`` one row per job (its
  selection as asked, its destination folder, the engine); ``transfer_files`` one row per file
  of a job with its state, the bytes received so far and the agent's lease on it, so that a
  restarted agent continues every job where it stopped. ``replicas``: the copies a job made
  and verified at this site (a name's holders besides its origin).

Names and tree paths use the "C" collation on PostgreSQL: prefix filters are byte-range scans
and must agree with SQLite's binary ordering.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeEngine

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# byte-wise ordering on both backends (prefix ranges, stable sort)
CText: TypeEngine[str] = String().with_variant(String(collation="C"), "postgresql")
# 64-bit ids on PostgreSQL; SQLite needs INTEGER for the rowid alias
Id: TypeEngine[int] = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class File(Base):
    __tablename__ = "files"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    name: Mapped[str] = mapped_column(CText, unique=True)
    scheme: Mapped[str] = mapped_column(String(64))
    filename: Mapped[str | None] = mapped_column(String)
    #: the file name before corrections (the last component of the translator's input)
    original: Mapped[str] = mapped_column(String)
    #: the path below the directory ``ndnsci publish`` walked, as found; None for name records
    original_path: Mapped[str | None] = mapped_column(String)
    size: Mapped[int | None] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))
    mtime: Mapped[float | None]
    version: Mapped[str | None] = mapped_column(String)
    # ISO 8601 text (fixed width, so string order is time order on every calendar)
    time_start: Mapped[str | None] = mapped_column(String(32))
    time_end: Mapped[str | None] = mapped_column(String(32))
    facets: Mapped[dict[str, Any]] = mapped_column(JSON)
    packed: Mapped[bytes] = mapped_column(LargeBinary)
    corrections: Mapped[list[Any]] = mapped_column(JSON)
    extra: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSON)
    seq: Mapped[int] = mapped_column(BigInteger)
    published_at: Mapped[str] = mapped_column(String(32))
    #: the site that published the record (its origin); None: this catalog, before it had a name
    site: Mapped[str | None] = mapped_column(String(64))


class FacetValue(Base):
    __tablename__ = "facet_values"
    __table_args__ = (UniqueConstraint("key", "value"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    key: Mapped[str] = mapped_column(CText)
    value: Mapped[str] = mapped_column(CText)


class FacetKey(Base):
    """Facet keys present in the catalog (valid filters besides the registered schemes' keys)."""

    __tablename__ = "facet_keys"

    key: Mapped[str] = mapped_column(CText, primary_key=True)


class TreeNode(Base):
    """One directory-like prefix; keyed by (parent, component) so that the children of a
    node are a range of the primary key (WITHOUT ROWID on SQLite: one B-tree per table)."""

    __tablename__ = "tree_nodes"
    __table_args__ = ({"sqlite_with_rowid": False},)

    parent: Mapped[str] = mapped_column(CText, primary_key=True)
    component: Mapped[str] = mapped_column(CText, primary_key=True)
    # the node's own path is parent + "/" + component (not stored: a third of the row)
    #: files anywhere under this prefix
    files: Mapped[int] = mapped_column(BigInteger)
    #: files directly under this prefix
    leaves: Mapped[int] = mapped_column(BigInteger)


class Change(Base):
    __tablename__ = "changes"

    seq: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=False)
    op: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(CText)
    version: Mapped[str | None] = mapped_column(String)
    at: Mapped[str] = mapped_column(String(32))
    #: the row the change wrote or removed (ids are reused only after a retraction)
    file_id: Mapped[int | None] = mapped_column(BigInteger)
    #: the origin site of the record changed (None: this catalog, before it had a name)
    site: Mapped[str | None] = mapped_column(String(64))


class FileHistory(Base):
    __tablename__ = "file_history"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    name: Mapped[str] = mapped_column(CText, index=True)
    version: Mapped[str | None] = mapped_column(String)
    record: Mapped[dict[str, Any]] = mapped_column(JSON)
    #: the change that replaced or retracted this version
    seq: Mapped[int] = mapped_column(BigInteger)
    replaced_at: Mapped[str] = mapped_column(String(32))


class CatalogState(Base):
    __tablename__ = "catalog_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    last_seq: Mapped[int] = mapped_column(BigInteger)
    files: Mapped[int] = mapped_column(BigInteger)
    bytes: Mapped[int] = mapped_column(BigInteger)


class Token(Base):
    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[str] = mapped_column(String(32))
    #: refused from then on (the format of ``created_at``); None: never expires
    expires_at: Mapped[str | None] = mapped_column(String(32))


class Site(Base):
    """This catalog's own site (``local``) and the sites whose changes it accepts (trust list)."""

    __tablename__ = "sites"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    #: the site's NDN prefix: its changes are ``<prefix>/catalog/changes/seq=<n>``
    prefix: Mapped[str] = mapped_column(CText, unique=True)
    #: the raw Ed25519 public key, hex (64 digits)
    public_key: Mapped[str] = mapped_column(String(64))
    local: Mapped[bool] = mapped_column(Boolean)
    added_at: Mapped[str] = mapped_column(String(32))
    #: the site's bootstrap time (Unix seconds, as State Vector Sync names it): set when the
    #: site names itself; a catalog started afresh under the same name gets a new one, and
    #: its batch numbers count from 1 again. For a remote site: the boot of ``applied``.
    boot: Mapped[int] = mapped_column(BigInteger)
    #: change batches of this site applied here, in order (1..applied); for the local site,
    #: the batches it published
    applied: Mapped[int] = mapped_column(BigInteger)
    #: for the local site: the last local ``changes.seq`` its batches cover
    covered_seq: Mapped[int] = mapped_column(BigInteger)
    #: batches or changes of this site refused (bad signature, wrong site, malformed)
    refused: Mapped[int] = mapped_column(BigInteger)
    last_error: Mapped[str | None] = mapped_column(String)


class ChangeBatch(Base):
    """One signed batch of the local site's changes (immutable once written)."""

    __tablename__ = "change_batches"

    number: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=False)
    first_seq: Mapped[int] = mapped_column(BigInteger)
    last_seq: Mapped[int] = mapped_column(BigInteger)
    changes: Mapped[int] = mapped_column(Integer)
    #: the signed envelope (:mod:`ndnsci_catalog.federation.envelope`), what NDN and HTTP both serve
    envelope: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[str] = mapped_column(String(32))


class Conflict(Base):
    """A site's claim on a name another site holds: reported, never merged."""

    __tablename__ = "conflicts"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    name: Mapped[str] = mapped_column(CText, index=True)
    #: the site whose record the catalog keeps
    held_by: Mapped[str | None] = mapped_column(String(64))
    #: the site whose publication or retraction was refused
    claimed_by: Mapped[str | None] = mapped_column(String(64))
    op: Mapped[str] = mapped_column(String(16))
    at: Mapped[str] = mapped_column(String(32))


class TransferJob(Base):
    """A selection of files to copy into a folder below the site's transfer root."""

    __tablename__ = "transfer_jobs"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    #: the name of the token that submitted it
    owner: Mapped[str] = mapped_column(String(200))
    #: the folder, relative to the agent's root, the files go to (their DRS paths below it)
    destination: Mapped[str] = mapped_column(String(1024))
    engine: Mapped[str] = mapped_column(String(32))
    #: what was asked: {"names": [...]} or {"search": "..."} (the files are resolved at submit)
    selection: Mapped[dict[str, Any]] = mapped_column(JSON)
    cancelled: Mapped[bool] = mapped_column(Boolean)
    #: Unix seconds
    created: Mapped[float] = mapped_column(Float)
    updated: Mapped[float] = mapped_column(Float)


class TransferFile(Base):
    """One file of a transfer job: pending, running (leased by an agent), done, failed or
    cancelled."""

    __tablename__ = "transfer_files"
    __table_args__ = (UniqueConstraint("job_id", "name"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    job_id: Mapped[int] = mapped_column(BigInteger, index=True)
    name: Mapped[str] = mapped_column(CText)
    #: relative to the job's destination
    path: Mapped[str] = mapped_column(String)
    size: Mapped[int | None] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16), index=True)
    bytes_done: Mapped[int] = mapped_column(BigInteger)
    attempts: Mapped[int] = mapped_column(Integer)
    #: what moved the bytes (python, ndn-dpdk, ndn-dpdk+python), once done
    engine: Mapped[str | None] = mapped_column(String(32))
    error: Mapped[str | None] = mapped_column(String)
    #: a failed attempt is tried again from then on (Unix seconds)
    retry_at: Mapped[float | None] = mapped_column(Float)
    #: the agent running it and until when its claim holds (renewed as bytes arrive)
    agent: Mapped[str | None] = mapped_column(String(200))
    lease_until: Mapped[float | None] = mapped_column(Float)
    started: Mapped[float | None] = mapped_column(Float)
    finished: Mapped[float | None] = mapped_column(Float)


class Replica(Base):
    """A verified copy of a file at a site, made by a transfer job (never the origin's record:
    removing a replica leaves the file's record and its origin alone)."""

    __tablename__ = "replicas"
    __table_args__ = (UniqueConstraint("name", "path"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    name: Mapped[str] = mapped_column(CText, index=True)
    #: the site holding it (this catalog's own name; None before it has one)
    site: Mapped[str | None] = mapped_column(String(64))
    #: below the site's transfer root: the job's destination and the file's DRS path
    path: Mapped[str] = mapped_column(String)
    size: Mapped[int | None] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))
    job_id: Mapped[int | None] = mapped_column(BigInteger)
    created: Mapped[float] = mapped_column(Float)


def table(model: type[Base]) -> Table:
    """The Core table of a model, typed as one (``__table__`` is typed as any FromClause)."""
    return cast(Table, model.__table__)
