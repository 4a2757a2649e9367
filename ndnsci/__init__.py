"""ndnsci: find climate and high-energy-physics files by what they are, fetch them over NDN.

Search a catalog, fetch what it finds (verified by checksum, resumable, from the producer or
any NDN cache on the way), open it with xarray::

    import ndnsci

    cat = ndnsci.Catalog("http://127.0.0.1:8000")       # or $NDNSCI_CATALOG
    found = cat.search(model="HadCM3", variable="tas")   # lazily paged, typed results
    paths = ndnsci.fetch(found, "data", parallel=4)      # local paths, each verified
    ds = ndnsci.open_mfdataset(found)                    # fetched once, then local

Errors form one tree, :mod:`ndnsci.errors`. The package import is light: httpx, rich, netCDF4,
xarray and the catalog service are imported by the code that needs them.

>>> import ndnsci
>>> ndnsci.translate("tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc").ok
True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ndnsci import errors

if TYPE_CHECKING:
    from ndnsci.sdk.client import (
        AsyncCatalog,
        AsyncSearchResults,
        Catalog,
        Changes,
        File,
        FileRecord,
        Node,
        Query,
        SearchResults,
    )
    from ndnsci.sdk.dataset import data_dir, open_dataset, open_mfdataset
    from ndnsci.sdk.fetch import adownload, afetch, download, fetch
    from ndnsci.sdk.manifest import ManifestEntry, read_manifest
    from ndnsci.sdk.progress import LineProgress, NoProgress, Progress, RichProgress
    from ndnsci.sdk.publish import PublishBatch, PublishReport
    from ndnsci.sdk.quicklook import quicklook
    from ndnsci.sdk.report import FetchReport, Interrupted, Outcome
    from ndnsci.sdk.sample import make_sample
    from ndnsci.sdk.transfer import AsyncTransfer, Transfer, TransferFile, TransferStatus
    from ndnsci.site.stack import LocalStack
    from ndnsci_translators import Translation, reverse, translate

# The SDK's modules load on first use: `ndnsci --help` and `import ndnsci` stay fast.
_LAZY = {
    ".sdk.client": (
        "AsyncCatalog AsyncSearchResults Catalog Changes File FileRecord Node Query SearchResults"
    ),
    ".sdk.dataset": "data_dir open_dataset open_mfdataset",
    ".sdk.fetch": "adownload afetch download fetch",
    ".sdk.manifest": "ManifestEntry read_manifest",
    ".sdk.progress": "LineProgress NoProgress Progress RichProgress",
    ".sdk.publish": "PublishBatch PublishReport",
    ".sdk.quicklook": "quicklook",
    ".sdk.report": "FetchReport Interrupted Outcome",
    ".sdk.sample": "make_sample",
    ".sdk.transfer": "AsyncTransfer Transfer TransferFile TransferStatus",
    ".site.stack": "LocalStack",
    # the translators' registry reads entry points (importlib.metadata): ~25 ms a `ndnsci
    # fetch` does not need before its first byte
    "ndnsci_translators": "Translation reverse translate",
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names.split()}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'ndnsci' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__version__ = "0.1.0"

__all__ = [
    "AsyncCatalog",
    "AsyncSearchResults",
    "AsyncTransfer",
    "Catalog",
    "Changes",
    "FetchReport",
    "File",
    "FileRecord",
    "Interrupted",
    "LineProgress",
    "LocalStack",
    "ManifestEntry",
    "NoProgress",
    "Node",
    "Outcome",
    "Progress",
    "PublishBatch",
    "PublishReport",
    "Query",
    "RichProgress",
    "SearchResults",
    "Transfer",
    "TransferFile",
    "TransferStatus",
    "Translation",
    "__version__",
    "adownload",
    "afetch",
    "data_dir",
    "download",
    "errors",
    "fetch",
    "make_sample",
    "open_dataset",
    "open_mfdataset",
    "quicklook",
    "read_manifest",
    "reverse",
    "translate",
]
