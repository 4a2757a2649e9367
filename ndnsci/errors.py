"""Every error ndnsci raises, in one tree: catch the branch you can act on.

::

    NdnsciError
     ├── CatalogError                  the catalog refused a request, or cannot be reached
     │    ├── CatalogUnavailableError  nothing answers at the catalog URL (also ConnectionError)
     │    ├── QueryError               the catalog refused a parameter of the query (400, 422)
     │    │    └── UnknownFacetError   a facet the catalog does not know; .valid_facets
     │    └── NotInCatalogError        no published file has this name (404; also LookupError)
     ├── ManifestError                 a manifest line is not a file to fetch; .line
     ├── QuicklookError                a file or a slice that cannot be drawn (not netCDF, no
     │                                 such variable, a time step out of range); .code
     ├── DownloadError                 files of a bulk fetch failed; .report says which and why
     ├── MissingDependencyError        an optional package is not installed (also ImportError)
     ├── StackError                    a part of the local stack (``ndnsci up``) did not start
 │    └── SiteConfigError          a site's TOML file (``ndnsci site -c FILE``) is wrong; .line
     ├── FederationError               a site of the federation cannot be named, trusted or reached
     │    └── RefusedChangesError      a batch of another site's changes is forged, tampered
     │                                 with or malformed: refused, nothing applied
     ├── TestbedError                  the emulated testbed (``ndnsci testbed``): a bad topology,
     │                                 no root, a node that did not start
     └── NdnError                      the NDN data plane
          ├── InvalidNameError         a name URI or a name component is malformed
          ├── TransportError           no forwarder at NDN_CLIENT_TRANSPORT, or it went away
          ├── ForwarderError           the forwarder cannot be built, started, stopped or queried
          ├── PublisherKeyError        the publisher key is missing or unreadable
          ├── NativePlaneError         the native data plane (NDN-DPDK, NDNc) cannot run or answer
          └── FetchError               a retrieval failed
               ├── NotFoundError       the producer says the name does not exist, or nobody answers
               │    └── NoProducerError  nobody answers for the name (timeout, no route)
               ├── IntegrityError      a signature, digest or file checksum does not match
               └── FetchTimeout        segments kept timing out beyond the retry budget

Every message says what went wrong and what to do about it. Library errors (httpx, OSError)
are chained (``raise ... from exc``), so a traceback still shows the cause.

>>> import ndnsci
>>> try:
...     ndnsci.Catalog("http://127.0.0.1:9").search(model="HadCM3")
... except ndnsci.errors.CatalogUnavailableError as exc:
...     print("catalog down:", exc.url)
catalog down: http://127.0.0.1:9
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "CatalogError",
    "CatalogUnavailableError",
    "DownloadError",
    "FederationError",
    "FetchError",
    "FetchTimeout",
    "ForwarderError",
    "IntegrityError",
    "InvalidNameError",
    "ManifestError",
    "MissingDependencyError",
    "NativePlaneError",
    "NdnError",
    "NdnsciError",
    "NoProducerError",
    "NotFoundError",
    "NotInCatalogError",
    "PublisherKeyError",
    "QueryError",
    "QuicklookError",
    "RefusedChangesError",
    "SiteConfigError",
    "StackError",
    "TestbedError",
    "TransportError",
    "UnknownFacetError",
]


class NdnsciError(Exception):
    """Base of every error ndnsci raises on purpose."""


# --- the catalog --------------------------------------------------------------------------------


class CatalogError(NdnsciError):
    """The catalog answered with an error, or could not be asked.

    ``status`` is the HTTP status (None when there was no answer), ``detail`` the catalog's
    own explanation and ``url`` the catalog asked.
    """

    def __init__(
        self, message: str, *, url: str = "", status: int | None = None, detail: Any = None
    ) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.detail = detail


class CatalogUnavailableError(CatalogError, ConnectionError):
    """Nothing answers at the catalog URL (refused, timed out, not an ndnsci catalog)."""


class QueryError(CatalogError, ValueError):
    """The catalog refused the query: a malformed parameter, time bound or name."""


class UnknownFacetError(QueryError):
    """A facet the catalog does not know; ``valid_facets`` lists the ones it does."""

    def __init__(self, message: str, *, valid_facets: list[str], **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.valid_facets = valid_facets


class NotInCatalogError(CatalogError, LookupError):
    """No published file has this name."""


# --- the SDK ------------------------------------------------------------------------------------


class ManifestError(NdnsciError, ValueError):
    """A manifest line that does not describe a file to fetch; ``line`` is its number."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.line = line


if TYPE_CHECKING:  # what DownloadError needs, for the type checker only

    class _FailedFile(Protocol):
        @property
        def name(self) -> str: ...
        @property
        def error(self) -> str | None: ...

    class _Report(Protocol):
        """What :class:`DownloadError` needs of a report (``ndnsci.FetchReport`` is one)."""

        @property
        def outcomes(self) -> Sequence[object]: ...
        @property
        def failed(self) -> Sequence[_FailedFile]: ...


class QuicklookError(NdnsciError, ValueError):
    """A quick look that cannot be drawn: ``code`` is a stable kebab-case identifier
    (``not-netcdf``, ``unknown-variable``, ``time-out-of-range``, ``level-out-of-range``,
    ``no-map``), the message says why and what to ask instead."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class DownloadError(NdnsciError):
    """Some files of a fetch failed; ``report`` holds every file's outcome.

    The files that arrived are in place and verified; fetching the same list again fetches only
    what is missing.
    """

    def __init__(self, report: _Report) -> None:
        failed = report.failed
        first = f" (first: {failed[0].name}: {failed[0].error})" if failed else ""
        super().__init__(
            f"{len(failed)} of {len(report.outcomes)} files failed{first}; the others are in "
            f"place; fetch again to retry the failed ones"
        )
        self.report = report


class MissingDependencyError(NdnsciError, ImportError):
    """An optional dependency is missing; the message names the extra that brings it."""


class StackError(NdnsciError):
    """A part of the local stack (forwarder, catalog, producer) did not start or died."""


class SiteConfigError(StackError):
    """A site's configuration file is wrong: ``.path``, ``.line`` and ``.key`` say where; the
    message says what to write instead (docs/site.md)."""

    def __init__(self, message: str, path: object, line: int, key: str) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.key = key


class FederationError(NdnsciError):
    """A site of the federation cannot be named, trusted or reached (docs/federation.md)."""


class RefusedChangesError(FederationError):
    """Another site's batch of changes is forged, tampered with or malformed: nothing of it is
    applied, the refusal is logged and counted against the site."""


class TestbedError(NdnsciError):
    """The emulated testbed (``ndnsci testbed``) cannot be built, run or taken down."""

    __test__ = False  # not a pytest test class, whatever its name


# --- the NDN data plane (ndnsci.ndn) -----------------------------------------------------------


class NdnError(NdnsciError):
    """Base of every ndnsci data-plane error."""


class InvalidNameError(NdnError, ValueError):
    """A string is not a valid NDN name URI."""


class TransportError(NdnError, ConnectionError):
    """The forwarder cannot be reached, or closed the connection."""


class ForwarderError(NdnError):
    """The local NDNd forwarder cannot be managed."""


class PublisherKeyError(NdnError):
    """The publisher key is missing, unreadable or insecure."""


class NativePlaneError(NdnError):
    """The native data plane (NDN-DPDK, NDNc) is not built, cannot start on this machine, or
    refused an operation; the message says which and what to do."""


class FetchError(NdnError):
    """A file could not be retrieved."""


class NotFoundError(FetchError):
    """The name does not exist at the producer, or no producer answers for it."""


class NoProducerError(NotFoundError):
    """No producer answers for the name: nothing came back in time, or no route leads to one."""


class IntegrityError(FetchError):
    """Received bytes do not match their signature, digest or the published checksum."""


class FetchTimeout(FetchError):
    """Interests kept timing out beyond the retransmission budget."""


def missing(package: str, extra: str | None, purpose: str) -> MissingDependencyError:
    """The error for a ``package`` that ``pip install 'ndnsci[extra]'`` brings (``extra`` None:
    a dependency of ndnsci itself, missing after an install without dependencies)."""
    fix = f"pip install 'ndnsci[{extra}]'" if extra else f"pip install {package}"
    return MissingDependencyError(f"{purpose} needs {package}, which is not installed: {fix}")
