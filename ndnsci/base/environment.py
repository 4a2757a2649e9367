"""The SDK's and the command line's settings: every environment variable ndnsci reads, in one place.

:func:`settings` reads the environment when it is called (a script, a test or ``ndnsci up`` may
change a variable between two calls) and returns a :class:`Settings` (a NamedTuple). Folders follow
each platform's conventions through platformdirs (XDG on Linux: ``$XDG_CACHE_HOME``,
``$XDG_CONFIG_HOME``, ``$XDG_DATA_HOME``, ``$XDG_STATE_HOME``); an ``NDNSCI_*`` variable
overrides its folder. The catalog service has its own settings object
(:mod:`ndnsci_catalog.config`), as it runs apart from the SDK.

======================== ==============================================================
variable                 what
======================== ==============================================================
``NDNSCI_CATALOG``       the catalog the SDK and the CLI talk to (http://127.0.0.1:8000)
``NDNSCI_TOKEN``         the publish token of ``ndnsci publish --catalog``
``NDNSCI_CATALOG_CERT``  the certificate an https catalog must present (pinned: that one only)
``NDNSCI_DATA_DIR``      files ``open_dataset`` fetches (``<cache>/files``)
``NDNSCI_CACHE_DIR``     the producer's SHA-256 cache (the user cache folder)
``NDNSCI_CONFIG_DIR``    publisher keys (the user config folder)
``NDN_CLIENT_TRANSPORT`` the forwarder to talk to (``unix://<socket>``, ``tcp://h:p``)
``NDNSCI_FW_SOCK``       the socket ``ndnsci forwarder start`` listens on
``NDND``                 the ndnd binary
``XDG_RUNTIME_DIR``      where the forwarder's socket goes (else ``/tmp/ndnsci-<uid>``)
``NDNSCI_HOTLOOP``       the consumer's per-packet loop: ``auto``, ``c`` or ``python``
``NDNSCI_NATIVE_CACHE``  NDN-DPDK and NDNc builds (``/var/cache/ndnsci/native`` as root,
                         else ``<cache>/native``)
``NDNSCI_NDNDPDK_PREFIX`` an NDN-DPDK installation to use instead of the cached build
``NDNSCI_NDNC_PREFIX``   an NDNc installation to use instead of the cached build
``NDNSCI_NATIVE_RUN``    the native plane's state (``/run/ndnsci/native``)
``NDNSCI_TESTBED_STATE`` the testbed's records (``/run/ndnsci-testbed``)
``NSCI_DELAY``           the testbed's delay element (else built by deploy/testbed)
``COLUMNS``              the width of the command line's help (else the terminal's)
======================== ==============================================================
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pathlib is imported by settings(), which a fetch does not call
    from pathlib import Path

APP = "ndnsci"
DEFAULT_CATALOG = "http://127.0.0.1:8000"


class Settings(NamedTuple):
    catalog_url: str
    token: str | None
    #: fetched files of ``open_dataset``
    data_dir: Path
    #: caches that can be rebuilt (whole-file SHA-256 of served files)
    cache_dir: Path
    #: publisher keys
    config_dir: Path
    #: the user's own data: the local catalog, the sample archive
    share_dir: Path
    #: what a command keeps between runs (what ``ndnsci publish`` published from where)
    state_dir: Path
    #: ``NDN_CLIENT_TRANSPORT`` ('' when unset)
    transport: str
    #: where ``ndnsci forwarder start`` (and ``deploy/forwarder/run.sh``) put their socket
    default_socket: Path
    #: ``$NDNSCI_FW_SOCK``: the socket ``ndnsci forwarder`` uses instead of the default
    fw_sock: Path | None
    #: ``$NDND``: an ndnd binary to use instead of the one built or on PATH
    ndnd: str | None
    #: ``$NDNSCI_HOTLOOP``, lower-case ('auto' when unset)
    hotloop: str
    #: where NDN-DPDK and NDNc are built and kept
    native_cache: Path
    #: installations given instead of the cached builds
    ndn_dpdk_prefix: Path | None
    ndnc_prefix: Path | None
    #: the native plane's state
    native_run: Path
    #: ``ndnsci xrootd``'s server folder (its user must reach it)
    xrootd_run: Path
    #: the testbed's records
    testbed_state: Path
    #: the testbed's delay element, when given
    delay_binary: Path | None


def settings() -> Settings:
    """The settings the environment gives now."""
    from pathlib import Path

    import platformdirs

    env = os.environ
    cache = _path(env.get("NDNSCI_CACHE_DIR")) or Path(platformdirs.user_cache_dir(APP))
    return Settings(
        catalog_url=env.get("NDNSCI_CATALOG") or DEFAULT_CATALOG,
        token=env.get("NDNSCI_TOKEN") or None,
        data_dir=_path(env.get("NDNSCI_DATA_DIR"))
        or Path(platformdirs.user_cache_dir(APP)) / "files",
        cache_dir=cache,
        config_dir=_path(env.get("NDNSCI_CONFIG_DIR")) or Path(platformdirs.user_config_dir(APP)),
        share_dir=Path(platformdirs.user_data_dir(APP)),
        state_dir=Path(platformdirs.user_state_dir(APP)),
        transport=client_transport(),
        default_socket=Path(default_socket()),
        fw_sock=_path(env.get("NDNSCI_FW_SOCK")),
        ndnd=env.get("NDND") or None,
        hotloop=hotloop(),
        native_cache=_path(env.get("NDNSCI_NATIVE_CACHE"))
        or (
            Path("/var/cache/ndnsci/native")
            if os.geteuid() == 0
            else Path(platformdirs.user_cache_dir(APP)) / "native"
        ),
        ndn_dpdk_prefix=_path(env.get("NDNSCI_NDNDPDK_PREFIX")),
        ndnc_prefix=_path(env.get("NDNSCI_NDNC_PREFIX")),
        native_run=Path(native_run()),
        xrootd_run=_path(env.get("NDNSCI_XROOTD_RUN")) or Path("/run/ndnsci/xrootd"),
        testbed_state=_path(env.get("NDNSCI_TESTBED_STATE")) or Path("/run/ndnsci-testbed"),
        delay_binary=_path(env.get("NSCI_DELAY")),
    )


# What the data plane reads on every fetch, one value each: settings() computes every folder
# through platformdirs (with tempfile, ~4 ms of a fetch's start-up, DEVELOPERS.md "Start-up
# budget"), which a fetch does not need.


def given_catalog() -> str | None:
    """``$NDNSCI_CATALOG`` when it is set (no default: a fetch by name checks a catalog only
    when one is given), without the settings' imports."""
    return os.environ.get("NDNSCI_CATALOG") or None


def catalog_cert() -> str | None:
    """``$NDNSCI_CATALOG_CERT``: the TLS certificate (PEM) an https catalog must present, in
    place of the system's CAs (a site's parts reach their catalog at its listen address, which
    its certificate may not name; :func:`ndnsci.base.tls.pinned`). None when unset."""
    return os.environ.get("NDNSCI_CATALOG_CERT") or None


def native_run() -> str:
    """The native plane's folder (``settings().native_run``) without the settings' imports:
    the default engine asks whether a plane is up on a fetch's way to its first byte."""
    return os.environ.get("NDNSCI_NATIVE_RUN") or "/run/ndnsci/native"


def client_transport() -> str:
    """``$NDN_CLIENT_TRANSPORT`` ('' when unset): :attr:`Settings.transport`."""
    return os.environ.get("NDN_CLIENT_TRANSPORT", "")


def hotloop() -> str:
    """``$NDNSCI_HOTLOOP``, lower-case ('auto' when unset): :attr:`Settings.hotloop`."""
    return os.environ.get("NDNSCI_HOTLOOP", "auto").strip().lower() or "auto"


def default_socket() -> str:
    """``$XDG_RUNTIME_DIR/ndnsci/nfd.sock`` when that folder is usable, else
    ``/tmp/ndnsci-<uid>/nfd.sock``: what ``deploy/forwarder/run.sh`` renders too
    (:attr:`Settings.default_socket`, as a string: the data plane's path has no pathlib)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        return os.path.join(runtime, APP, "nfd.sock")
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"{APP}-{os.getuid()}", "nfd.sock")


def terminal_columns() -> int:
    """``$COLUMNS``, else the width of the terminal on stdout, else 80: the rule of
    ``shutil.get_terminal_size()``, which argparse calls for every formatter it makes (and
    adding an argument makes one), without importing shutil (with zlib, bz2 and lzma, ~3 ms of a
    fetch's start-up)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (ValueError, OSError):  # not a terminal, or stdout closed
            columns = 0
    return columns if columns > 0 else 80


def _path(value: str | None) -> Path | None:
    from pathlib import Path

    return Path(value) if value else None
