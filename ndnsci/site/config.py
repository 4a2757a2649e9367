"""A site in one TOML file (``ndnsci site ... -c FILE``): the model and its validation.

:func:`load` reads the file with :mod:`tomllib`, checks every key and value before anything
starts, and returns a :class:`SiteConfig`. Every error is a :class:`~ndnsci.errors.SiteConfigError`
naming the file, the line and the key, and saying what to write instead; a key the model does
not know is an error too, with the nearest known key suggested.

The smallest working site (every other key has a default)::

    [site]
    name = "ucla"

    [[data]]
    path = "/srv/cmip6"
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import os
import re
import socket
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ndnsci.errors import SiteConfigError

ENGINES = ("auto", "python", "ndn-dpdk")
SCHEMES = ("auto", "cmip5", "cmip6", "cms")
_SITE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
_HEX_KEY = re.compile(r"^[0-9a-f]{64}$")
_FACE = re.compile(r"^(udp4|tcp4|udp6|tcp6|unix|ws)://\S+$")


@dataclass(frozen=True)
class Listen:
    host: str
    port: int  # 0: any free port

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class CatalogConfig:
    db: str  # a SQLAlchemy URL: sqlite:///PATH or postgresql://...
    listen: Listen
    workers: int = 1
    tls_cert: Path | None = None
    tls_key: Path | None = None
    allowed_origins: tuple[str, ...] = ()
    trusted_proxies: tuple[str, ...] = ()


@dataclass(frozen=True)
class DataRoot:
    path: Path
    scheme: str = "auto"
    engine: str = "auto"


@dataclass(frozen=True)
class Route:
    prefix: str
    face: str


@dataclass(frozen=True)
class ForwarderConfig:
    ws_port: int = 0
    udp_port: int = 0
    faces: tuple[str, ...] = ()
    routes: tuple[Route, ...] = ()


@dataclass(frozen=True)
class TrustedSite:
    name: str
    prefix: str
    key: str  # the site's raw Ed25519 public key, hex


@dataclass(frozen=True)
class GatewayConfig:
    enabled: bool = False
    listen: Listen = Listen("127.0.0.1", 0)


@dataclass(frozen=True)
class TransfersConfig:
    """The transfer agent (docs/transfers.md): runs the jobs submitted to this site's catalog
    into ``root``, and a producer serves the copies there (replicas) under their names."""

    enabled: bool = True
    root: Path | None = None  # None: <state_dir>/transfers
    parallel: int = 4
    serve: bool = True


@dataclass(frozen=True)
class SiteConfig:
    path: Path  # the file it was read from
    name: str
    prefix: str
    key: Path | None  # the publisher key (PEM); None: one made in the state dir
    state_dir: Path
    catalog: CatalogConfig
    data: tuple[DataRoot, ...] = ()
    forwarder: ForwarderConfig = field(default_factory=ForwarderConfig)
    trusted: tuple[TrustedSite, ...] = ()
    gateway: GatewayConfig = field(default_factory=GatewayConfig)
    transfers: TransfersConfig = field(default_factory=TransfersConfig)

    @property
    def transfer_root(self) -> Path:
        return self.transfers.root or self.state_dir / "transfers"


# --- the schema: table -> key -> (type, required) --------------------------------------------

_SCHEMA: dict[str, dict[str, tuple[type | tuple[type, ...], bool]]] = {
    "site": {"name": (str, True), "prefix": (str, False), "key": (str, False),
             "state_dir": (str, False)},
    "catalog": {"db": (str, False), "listen": (str, False), "workers": (int, False),
                "tls_cert": (str, False), "tls_key": (str, False),
                "allowed_origins": (list, False), "trusted_proxies": (list, False)},
    "data": {"path": (str, True), "scheme": (str, False), "engine": (str, False)},
    "forwarder": {"ws_port": (int, False), "udp_port": (int, False), "faces": (list, False),
                  "routes": (list, False)},
    "forwarder.routes": {"prefix": (str, True), "face": (str, True)},
    "federation": {"trusted": (list, False)},
    "federation.trusted": {"name": (str, True), "prefix": (str, True), "key": (str, True)},
    "gateway": {"enabled": (bool, False), "listen": (str, False)},
    "transfers": {"enabled": (bool, False), "root": (str, False), "parallel": (int, False),
                  "serve": (bool, False)},
}  # fmt: skip
_TABLES = ("site", "catalog", "data", "forwarder", "federation", "gateway", "transfers")
_TYPE_WORDS = {str: "a string in quotes", int: "a whole number", bool: "true or false",
               list: "a list in [ ]", dict: "a table"}  # fmt: skip


class _Lines:
    """Where each key is in the file: tomllib gives values, not lines, so the text is scanned
    for table headers and ``key =`` lines (enough for the files a person writes)."""

    def __init__(self, text: str) -> None:
        self.found: dict[str, int] = {}
        table = ""
        counts: dict[str, int] = {}
        header = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?")
        assign = re.compile(r"^\s*([A-Za-z0-9_\-\"']+)\s*=")
        for number, line in enumerate(text.splitlines(), 1):
            if match := header.match(line):
                name = match.group(2).replace('"', "").replace("'", "")
                if match.group(1) == "[[":
                    index = counts.get(name, 0)
                    counts[name] = index + 1
                    table = f"{name}[{index}]"
                else:
                    table = name
                self.found.setdefault(table, number)
            elif match := assign.match(line):
                key = match.group(1).strip("\"'")
                self.found.setdefault(f"{table}.{key}" if table else key, number)

    def line(self, where: str) -> int:
        """The line of ``where`` (``catalog.listen``, ``data[1].path``), else of the nearest
        enclosing table that is in the file; 1 when none is."""
        probe = where
        while probe:
            if probe in self.found:
                return self.found[probe]
            # federation.trusted[0].key -> federation.trusted[0] -> federation
            cut = max(probe.rfind("."), probe.rfind("["))
            probe = probe[:cut] if cut > 0 else ""
        return 1


class _Checker:
    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = _Lines(text)

    def fail(self, where: str, message: str) -> SiteConfigError:
        line = self.lines.line(where)
        return SiteConfigError(f"{self.path}:{line}: {where}: {message}", self.path, line, where)

    def table(self, raw: Any, where: str, schema: str) -> dict[str, Any]:
        if not isinstance(raw, dict):
            raise self.fail(where, f"must be a table ([{where}]), not {_word(raw)}")
        known = _SCHEMA[schema]
        for key, value in raw.items():
            full = f"{where}.{key}"
            if key not in known:
                near = difflib.get_close_matches(key, list(known), n=1, cutoff=0.5)
                hint = f"did you mean {near[0]!r}?" if near else ""
                raise self.fail(
                    full,
                    f"unknown key; {hint + ' ' if hint else ''}the keys of [{schema}] are "
                    + ", ".join(known),
                )
            kind, _ = known[key]
            if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
                raise self.fail(full, f"must be {_TYPE_WORDS[kind]}, not {_word(value)}")  # type: ignore[index]
        for key, (_, required) in known.items():
            if required and key not in raw:
                raise self.fail(where, f"{key!r} is missing: add {key} = ... to [{schema}]")
        return raw

    def strings(self, raw: list[Any], where: str) -> tuple[str, ...]:
        for index, item in enumerate(raw):
            if not isinstance(item, str):
                raise self.fail(
                    f"{where}[{index}]", f"must be a string in quotes, not {_word(item)}"
                )
        return tuple(raw)

    def listen(self, text: str, where: str) -> Listen:
        host, sep, port_text = text.rpartition(":")
        if not sep or not port_text.isdigit() or not host:
            raise self.fail(where, f'{text!r} is not HOST:PORT: write e.g. "127.0.0.1:8000"')
        port = int(port_text)
        if port > 65535:
            raise self.fail(
                where, f"port {port} is above 65535: write a port 1-65535 (0: any free)"
            )
        host = host.strip("[]")
        try:
            ipaddress.ip_address(host)
        except ValueError:
            if host != "localhost":
                raise self.fail(
                    where, f'{host!r} is not an IP address: write e.g. "127.0.0.1:{port}"'
                ) from None
        return Listen(host, port)

    def port(self, raw: dict[str, Any], key: str, where: str) -> int:
        value = int(raw.get(key, 0))
        if not 0 <= value <= 65535:
            raise self.fail(f"{where}.{key}", f"{value} is not a port: write 1-65535 (0: any free)")
        return value

    def file(self, text: str, where: str, what: str) -> Path:
        path = self.resolve(text)
        if not path.is_file():
            raise self.fail(where, f"no {what} at {path}: write the path of an existing file")
        if not os.access(path, os.R_OK):
            raise self.fail(where, f"{path} is not readable: chmod it, or write another path")
        return path

    def resolve(self, text: str) -> Path:
        path = Path(text).expanduser()
        return path if path.is_absolute() else (self.path.parent / path).resolve()


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def load(path: str | os.PathLike[str], *, check_ports: bool = True) -> SiteConfig:
    """The site described by the TOML file ``path``, checked whole.

    ``check_ports``: a listen port that something answers on already is an error (leave it
    out where the site's own parts may be running, e.g. ``status``).

    Raises:
        SiteConfigError: the file cannot be read, is not TOML, or a key or value is wrong.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SiteConfigError(
            f"{path}:1: cannot read the site's configuration: {exc.strerror or exc}", path, 1, ""
        ) from None
    text = data.decode("utf-8", errors="replace")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None) or _decode_line(str(exc))
        raise SiteConfigError(
            f"{path}:{line}: not TOML: {exc}; write key = value lines under [table] headers",
            path, line, "",
        ) from None  # fmt: skip
    return _Build(_Checker(path, text), check_ports).site(raw)


def _decode_line(message: str) -> int:
    match = re.search(r"line (\d+)", message)
    return int(match.group(1)) if match else 1


class _Build:
    def __init__(self, checker: _Checker, check_ports: bool) -> None:
        self.c = checker
        self.check_ports = check_ports

    def site(self, raw: dict[str, Any]) -> SiteConfig:
        c = self.c
        for key in raw:
            if key not in _TABLES:
                near = difflib.get_close_matches(key, _TABLES, n=1, cutoff=0.5)
                hint = f"did you mean [{near[0]}]? " if near else ""
                raise c.fail(key, f"unknown table; {hint}the tables are " + ", ".join(_TABLES))
        if "site" not in raw:
            raise c.fail("site", 'missing: a site needs [site] with name = "..."')
        site = c.table(raw["site"], "site", "site")
        name = site["name"]
        if not _SITE_NAME.match(name):
            raise c.fail("site.name", f"{name!r}: write a lower-case letter, then up to 63 "
                         "letters, digits, '-' or '_' (e.g. \"ucla\")")  # fmt: skip
        prefix = site.get("prefix", f"/{name}")
        self.ndn_name(prefix, "site.prefix")
        state_dir = c.resolve(site["state_dir"]) if "state_dir" in site else _default_state(name)
        key_file = c.file(site["key"], "site.key", "publisher key") if "key" in site else None
        if key_file is not None:
            self.private_key(key_file)
        catalog = self.catalog(raw.get("catalog", {}), state_dir)
        data = raw.get("data", [])
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list):
            raise c.fail("data", "must be [[data]] tables, one a data root")
        roots = tuple(self.root(item, f"data[{i}]") for i, item in enumerate(data))
        fw = self.forwarder(raw.get("forwarder", {}))
        trusted = self.federation(raw.get("federation", {}), name)
        gateway = self.gateway(raw.get("gateway", {}))
        ports = [("catalog.listen", catalog.listen.port)]
        if gateway.enabled:
            ports.append(("gateway.listen", gateway.listen.port))
        ports += [("forwarder.ws_port", fw.ws_port)]
        seen: dict[int, str] = {}
        for where, port in ports:
            if port and port in seen:
                raise c.fail(where, f"port {port} is {seen[port]}'s too: write another port")
            seen[port] = where
            if port and self.check_ports and _in_use(port):
                raise c.fail(where, f"port {port} is in use (another site, or `ndnsci site up` "
                             "running?): write another port, or 0 for any free one")  # fmt: skip
        transfers = self.transfers(raw.get("transfers", {}), roots)
        return SiteConfig(c.path, name, prefix, key_file, state_dir, catalog, roots, fw, trusted,
                          gateway, transfers)  # fmt: skip

    def ndn_name(self, prefix: str, where: str) -> None:
        parts = prefix.split("/")
        if (
            not prefix.startswith("/")
            or len(parts) < 2
            or any(p in ("", ".", "..") for p in parts[1:])
        ):
            raise self.c.fail(where, f'{prefix!r} is not an NDN name: write e.g. "/ucla"')

    def private_key(self, path: Path) -> None:
        import stat

        if path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise self.c.fail("site.key", f"{path} is readable by others: chmod 600 {path}")
        text = path.read_text(errors="replace")
        if "-----BEGIN PRIVATE KEY-----" not in text:
            raise self.c.fail("site.key", f"{path} is not a PEM private key: write the path of "
                              "one `ndnsci keys create` made (~/.config/ndnsci/keys/)")  # fmt: skip

    def catalog(self, raw: Any, state_dir: Path) -> CatalogConfig:
        c = self.c
        t = c.table(raw, "catalog", "catalog")
        db = t.get("db", str(state_dir / "catalog.db"))
        if "://" in db:
            if not db.startswith(("sqlite:///", "postgresql://", "postgresql+psycopg://")):
                raise c.fail("catalog.db", f"{db!r}: write a SQLite path, sqlite:///PATH or "
                             "postgresql://USER@HOST/DB")  # fmt: skip
        else:
            db_path = c.resolve(db)
            if db_path.is_dir():
                raise c.fail("catalog.db", f"{db_path} is a folder: write a file's path, e.g. "
                             f"\"{db_path / 'catalog.db'}\"")  # fmt: skip
            db = f"sqlite:///{db_path}"
        listen = c.listen(t.get("listen", "127.0.0.1:8000"), "catalog.listen")
        workers = t.get("workers", 1)
        if not 1 <= workers <= 64:
            raise c.fail("catalog.workers", f"{workers}: write a number of processes, 1-64")
        cert = c.file(t["tls_cert"], "catalog.tls_cert", "certificate") if "tls_cert" in t else None
        tls_key = c.file(t["tls_key"], "catalog.tls_key", "TLS key") if "tls_key" in t else None
        if (cert is None) != (tls_key is None):
            missing = "tls_key" if tls_key is None else "tls_cert"
            raise c.fail(f"catalog.{missing}", "missing: TLS needs both tls_cert and tls_key")
        if cert is not None and tls_key is not None:
            from ndnsci.base import tls

            if (wrong := tls.problem(cert, tls_key)) is not None:  # as the server would load it
                where = "catalog.tls_key" if wrong.file == "key" else "catalog.tls_cert"
                raise c.fail(where, f"{wrong}: write the paths of a PEM certificate and its key")
        origins = c.strings(t.get("allowed_origins", []), "catalog.allowed_origins")
        for i, origin in enumerate(origins):
            if origin != "*" and not re.match(r"^https?://[^/\s]+$", origin):
                raise c.fail(
                    f"catalog.allowed_origins[{i}]",
                    f'{origin!r}: write an origin such as "https://portal.example.org" '
                    '(no path), or "*"',
                )
        proxies = c.strings(t.get("trusted_proxies", []), "catalog.trusted_proxies")
        for i, proxy in enumerate(proxies):
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise c.fail(f"catalog.trusted_proxies[{i}]", f"{proxy!r} is not an address: "
                             "write e.g. \"10.0.0.1\" or \"10.0.0.0/24\"") from None  # fmt: skip
        return CatalogConfig(db, listen, workers, cert, tls_key, origins, proxies)

    def root(self, raw: Any, where: str) -> DataRoot:
        c = self.c
        t = c.table(raw, where, "data")
        path = c.resolve(t["path"])
        if not path.is_dir():
            raise c.fail(
                f"{where}.path", f"no folder {path}: write the path of a folder to publish"
            )
        if not os.access(path, os.R_OK | os.X_OK):
            raise c.fail(f"{where}.path", f"{path} is not readable by this user: chmod it "
                         "(a+rX), or run the site as its owner")  # fmt: skip
        scheme = t.get("scheme", "auto")
        if scheme not in SCHEMES:
            raise c.fail(f"{where}.scheme", f"{scheme!r}: write one of " + ", ".join(SCHEMES))
        engine = t.get("engine", "auto")
        if engine not in ENGINES:
            raise c.fail(f"{where}.engine", f"{engine!r}: write one of " + ", ".join(ENGINES))
        return DataRoot(path, scheme, engine)

    def forwarder(self, raw: Any) -> ForwarderConfig:
        c = self.c
        t = c.table(raw, "forwarder", "forwarder")
        faces = c.strings(t.get("faces", []), "forwarder.faces")
        for i, face in enumerate(faces):
            if not _FACE.match(face):
                raise c.fail(f"forwarder.faces[{i}]", f"{face!r} is not a face URI: write e.g. "
                             "\"udp4://192.0.2.1:6363\"")  # fmt: skip
        routes = []
        for i, item in enumerate(t.get("routes", [])):
            r = c.table(item, f"forwarder.routes[{i}]", "forwarder.routes")
            self.ndn_name(r["prefix"], f"forwarder.routes[{i}].prefix")
            if not _FACE.match(r["face"]):
                raise c.fail(f"forwarder.routes[{i}].face", f"{r['face']!r} is not a face URI: "
                             "write e.g. \"udp4://192.0.2.1:6363\"")  # fmt: skip
            routes.append(Route(r["prefix"], r["face"]))
        return ForwarderConfig(
            self.port(t, "ws_port", "forwarder"), self.port(t, "udp_port", "forwarder"),
            faces, tuple(routes),
        )  # fmt: skip

    def port(self, raw: dict[str, Any], key: str, where: str) -> int:
        return self.c.port(raw, key, where)

    def federation(self, raw: Any, own: str) -> tuple[TrustedSite, ...]:
        c = self.c
        t = c.table(raw, "federation", "federation")
        out = []
        for i, item in enumerate(t.get("trusted", [])):
            where = f"federation.trusted[{i}]"
            if isinstance(item, dict) and "key" not in item:
                raise c.fail(where, "'key' is missing: a trusted site needs key = \"<64 hex "
                             "digits>\", as `ndnsci keys show` prints it on that site")  # fmt: skip
            e = c.table(item, where, "federation.trusted")
            if not _SITE_NAME.match(e["name"]) or e["name"] == own:
                raise c.fail(f"{where}.name", f"{e['name']!r}: write another site's name (a "
                             "lower-case letter, then letters, digits, '-' or '_')")  # fmt: skip
            self.ndn_name(e["prefix"], f"{where}.prefix")
            key = e["key"].strip().lower()
            if not _HEX_KEY.match(key):
                raise c.fail(f"{where}.key", "not an Ed25519 public key: write the 64 hex "
                             "digits `ndnsci keys show` prints on that site")  # fmt: skip
            out.append(TrustedSite(e["name"], e["prefix"], key))
        return tuple(out)

    def gateway(self, raw: Any) -> GatewayConfig:
        t = self.c.table(raw, "gateway", "gateway")
        listen = self.c.listen(t.get("listen", "127.0.0.1:0"), "gateway.listen")
        return GatewayConfig(bool(t.get("enabled", False)), listen)

    def transfers(self, raw: Any, roots: tuple[DataRoot, ...]) -> TransfersConfig:
        c = self.c
        t = c.table(raw, "transfers", "transfers")
        root = None
        if "root" in t:
            root = c.resolve(t["root"])
            for i, data in enumerate(roots):
                if root == data.path or data.path in root.parents or root in data.path.parents:
                    raise c.fail("transfers.root", f"{root} overlaps data[{i}].path "
                                 f"{data.path}: write a folder of its own")  # fmt: skip
            if root.exists() and not root.is_dir():
                raise c.fail("transfers.root", f"{root} is not a folder: write a folder's path")
        parallel = t.get("parallel", 4)
        if not 1 <= parallel <= 256:
            raise c.fail("transfers.parallel", f"{parallel}: write a number of workers, 1-256")
        return TransfersConfig(
            bool(t.get("enabled", True)), root, parallel, bool(t.get("serve", True))
        )


def _default_state(name: str) -> Path:
    from ndnsci.base.environment import settings

    return settings().state_dir / "sites" / name


def _in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def to_dict(config: SiteConfig) -> dict[str, Any]:
    """The configuration as JSON takes it (paths as strings), for ``site check --json``."""

    def plain(value: Any) -> Any:
        if isinstance(value, Path):
            return str(value)
        if isinstance(value, Listen):
            return str(value)
        if isinstance(value, tuple):
            return [plain(v) for v in value]
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return value

    result: dict[str, Any] = plain(config)
    return result
