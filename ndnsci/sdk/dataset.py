"""Open published netCDF files with xarray: fetched on first use, the local copy afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ndnsci.base.environment import settings
from ndnsci.errors import missing
from ndnsci.sdk.client import File
from ndnsci.sdk.fetch import fetch
from ndnsci.sdk.manifest import ManifestEntry

if TYPE_CHECKING:
    import xarray

    from ndnsci.sdk.fetch import Item, Layout
    from ndnsci.sdk.progress import Progress


def data_dir() -> Path:
    """Where :func:`open_dataset` keeps fetched files: ``$NDNSCI_DATA_DIR``, else
    ``$XDG_CACHE_HOME/ndnsci/files`` (``~/.cache/ndnsci/files``)."""
    return settings().data_dir


def _xarray() -> Any:
    try:
        import xarray
    except ImportError as exc:
        raise missing("xarray", "xarray", "opening datasets") from exc
    return xarray


def local_path(
    item: File | ManifestEntry | str | os.PathLike[str],
    dest: str | os.PathLike[str] | None = None,
    **fetch_kwargs: Any,
) -> Path:
    """The local file for ``item``: an existing path as is, else fetched into ``dest``.

    Raises:
        DownloadError: the file could not be fetched (the reason is in ``.report``).
    """
    if isinstance(item, os.PathLike) or (isinstance(item, str) and os.path.isfile(item)):
        return Path(item)
    fetch_kwargs.setdefault("progress", False)
    return fetch([item], dest or data_dir(), **fetch_kwargs)[0]


def open_dataset(
    item: File | ManifestEntry | str | os.PathLike[str],
    *,
    dest: str | os.PathLike[str] | None = None,
    **xarray_kwargs: Any,
) -> xarray.Dataset:
    """Open one file with :func:`xarray.open_dataset`, fetching it first when needed.

    ``item`` is a search result, an NDN name or a local path. Fetched files go to ``dest``
    (default: :func:`data_dir`) in the DRS layout; the next call finds the verified local copy
    and opens it without going to the network.

    Example::

        >>> found = ndnsci.Catalog().search(model="HadCM3", variable="tas")
        >>> ds = ndnsci.open_dataset(found[0])
        >>> ds.tas.attrs["units"]
        'K'

    Raises:
        DownloadError: the file could not be fetched.
        MissingDependencyError: xarray is not installed (``pip install 'ndnsci[xarray]'``).
    """
    xr = _xarray()
    dataset: xarray.Dataset = xr.open_dataset(local_path(item, dest), **xarray_kwargs)
    return dataset


def open_mfdataset(
    items: Iterable[Item],
    *,
    dest: str | os.PathLike[str] | None = None,
    parallel: int = 4,
    progress: bool | str | Progress | None = False,
    layout: Layout = "drs",
    **xarray_kwargs: Any,
) -> xarray.Dataset:
    """Fetch files (e.g. a search's results) and open them as one dataset, combined by coords.

    Uses :func:`xarray.open_mfdataset` when dask is installed (lazy, chunked), else opens each
    file and combines them with :func:`xarray.combine_by_coords` (in memory).

    Example::

        >>> found = cat.search(model="HadCM3", experiment="historical", variable="tas")
        >>> ds = ndnsci.open_mfdataset(found)
        >>> ds.time.size  # both time chunks of the run, in order
        192

    Raises:
        DownloadError: a file could not be fetched.
        MissingDependencyError: xarray is not installed.
        ValueError: the files do not combine (e.g. different models' grids): search narrower.
    """
    xr = _xarray()
    paths = fetch(
        list(items), dest or data_dir(), parallel=parallel, progress=progress, layout=layout
    )
    if not paths:
        raise ValueError("no files to open: the search found nothing")
    xarray_kwargs.setdefault("combine", "by_coords")
    # CMIP files of one dataset share every variable without a time axis (bounds, heights):
    # concatenate along time only, take the rest from the first file (as intake-esm does)
    for key, value in (("data_vars", "minimal"), ("coords", "minimal"), ("compat", "override")):
        xarray_kwargs.setdefault(key, value)
    try:
        import dask  # noqa: F401
    except ImportError:
        combine = xarray_kwargs.pop("combine")
        if combine != "by_coords":
            raise missing("dask", "xarray", f"open_mfdataset(combine={combine!r})") from None
        combining = {k: xarray_kwargs.pop(k) for k in ("data_vars", "coords", "compat")}
        datasets = [xr.open_dataset(p, **xarray_kwargs) for p in paths]
        combined: xarray.Dataset = xr.combine_by_coords(
            datasets, combine_attrs="drop_conflicts", **combining
        )
        return combined
    xarray_kwargs.setdefault("combine_attrs", "drop_conflicts")
    dataset: xarray.Dataset = xr.open_mfdataset([str(p) for p in paths], **xarray_kwargs)
    return dataset
