"""Where the native builds are: the prefixes ``make native`` (deploy/ndn-dpdk, deploy/ndnc) made.

The build scripts install into ``<cache>/ndn-dpdk-<key>`` and ``<cache>/ndnc-<key>`` and point
``<cache>/ndn-dpdk`` and ``<cache>/ndnc`` at the finished ones (deploy/ndn-dpdk/common.sh);
``<cache>`` is ``$NDNSCI_NATIVE_CACHE``, else ``/var/cache/ndnsci/native`` for root, else
``~/.cache/ndnsci/native``. ``NDNSCI_NDNDPDK_PREFIX`` and ``NDNSCI_NDNC_PREFIX`` name a prefix
directly (an install made some other way). NDNc's XRootD storage plugin (deploy/xrootd) is
``<cache>/xrootd-ndn/lib/libXrdNdnOss.so``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ndnsci.base.environment import settings
from ndnsci.errors import NativePlaneError


def cache_root() -> Path:
    return settings().native_cache


@dataclass(frozen=True)
class Build:
    """One installed prefix."""

    prefix: Path

    def bin(self, name: str) -> Path:
        return self.prefix / "bin" / name

    @property
    def lib_dirs(self) -> list[Path]:
        """Its libraries' folders: its own, and those of the libraries it was built on
        (``deps``: NDN-DPDK's DPDK, SPDK, uBPF and liburing live in a prefix of their own)."""
        return [self.prefix / "lib", self.prefix / "deps" / "lib"]

    @property
    def build_times(self) -> str:
        try:
            return (self.prefix / "share" / "ndnsci" / "build-times.txt").read_text()
        except OSError:
            return ""


def _find(explicit: Path | None, link: str, probe: str) -> Build | None:
    prefix = explicit or cache_root() / link
    if not (prefix / probe).exists():
        return None
    if not explicit and not (prefix / ".complete").exists():
        return None  # an interrupted build
    return Build(prefix.resolve())


def ndn_dpdk() -> Build | None:
    """The NDN-DPDK build (``bin/ndndpdk-svc``), or None."""
    return _find(settings().ndn_dpdk_prefix, "ndn-dpdk", "bin/ndndpdk-svc")


def ndnc() -> Build | None:
    """The NDNc build (``bin/ndncft-client``), or None."""
    return _find(settings().ndnc_prefix, "ndnc", "bin/ndncft-client")


def xrootd_ndn() -> Build | None:
    """NDNc's XRootD storage plugin (``lib/libXrdNdnOss.so``, deploy/xrootd/build.sh), or None."""
    return _find(None, "xrootd-ndn", "lib/libXrdNdnOss.so")


def require_ndn_dpdk() -> Build:
    build = ndn_dpdk()
    if build is None:
        raise NativePlaneError(
            f"NDN-DPDK is not built (no {cache_root() / 'ndn-dpdk'}/bin/ndndpdk-svc): run "
            f"`make native` in the ndnsci checkout, or set NDNSCI_NDNDPDK_PREFIX"
        )
    return build


def require_ndnc() -> Build:
    build = ndnc()
    if build is None:
        raise NativePlaneError(
            f"NDNc is not built (no {cache_root() / 'ndnc'}/bin/ndncft-client): run "
            f"`make native` in the ndnsci checkout, or set NDNSCI_NDNC_PREFIX"
        )
    return build


def require_xrootd_ndn() -> Build:
    build = xrootd_ndn()
    if build is None:
        raise NativePlaneError(
            f"NDNc's XRootD storage plugin is not built (no {cache_root() / 'xrootd-ndn'}"
            "/lib/libXrdNdnOss.so): run `make native` in the ndnsci checkout"
        )
    return build
