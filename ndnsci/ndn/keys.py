"""The publisher key: Ed25519, created by ``ndnsci keys create``, signs RDR metadata.

Keys live under the user's configuration folder (``$NDNSCI_CONFIG_DIR``, else
``$XDG_CONFIG_HOME/ndnsci``, else ``~/.config/ndnsci``) in ``keys/<name>.key`` (PKCS#8 PEM,
mode 0600, folder 0700), never in the repository. A key is identified by its key id, the first
8 bytes of the SHA-256 of its raw 32-byte public key, in hex: the producer publishes the public
key at ``<prefix>/32=key/<key id>``, and because the id is derived from the key a consumer
checks that the key it fetched is the one the name promises.
"""

import functools
import os
import stat
from typing import TYPE_CHECKING, NamedTuple

from ndnsci.base import hashes
from ndnsci.base.environment import settings
from ndnsci.errors import PublisherKeyError

if TYPE_CHECKING:  # a fetch checks keys without pathlib: the folders are settings()'
    from pathlib import Path

DEFAULT_NAME = "default"


def config_dir() -> "Path":
    return settings().config_dir


def key_path(name: str = DEFAULT_NAME) -> "Path":
    if not name or "/" in name or name.startswith("."):
        raise PublisherKeyError(f"invalid key name {name!r}")
    return config_dir() / "keys" / f"{name}.key"


def key_id(public: bytes) -> str:
    return hashes.sha256(len(public))(public).digest()[:8].hex()


class PublisherKey(NamedTuple):
    name: str
    pem: bytes  # PKCS#8 private key

    @property
    def public(self) -> bytes:
        return _public(self.pem)

    @property
    def key_id(self) -> str:
        return key_id(self.public)

    def sign(self, message: bytes) -> bytes:
        return bytes(_signer(self.pem).sign(message))


# A producer signs every metadata answer and the key it serves, on the way to each consumer's
# first byte: the PEM is parsed and the public key exported once per key, not per packet
# (2.4 -> 0.8 ms a signature; the public key took 1.2 ms each time)


@functools.lru_cache(maxsize=8)
def _public(pem: bytes) -> bytes:
    return bytes(_import(pem).public_key().export_key(format="raw"))


@functools.lru_cache(maxsize=8)
def _signer(pem: bytes):  # type: ignore[no-untyped-def]
    from Cryptodome.Signature import eddsa

    return eddsa.new(_import(pem), "rfc8032")


def _import(pem: bytes):  # type: ignore[no-untyped-def]
    from Cryptodome.PublicKey import ECC

    return ECC.import_key(pem)


def create(name: str = DEFAULT_NAME, force: bool = False) -> PublisherKey:
    """Generate a key and store it with mode 0600; refuses to overwrite unless ``force``."""
    from Cryptodome.PublicKey import ECC

    path = key_path(name)
    if path.exists() and not force:
        raise PublisherKeyError(f"key {name!r} already exists at {path} (use --force to replace)")
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    pem = ECC.generate(curve="ed25519").export_key(format="PEM").encode()
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    os.replace(tmp, path)
    return PublisherKey(name, pem)


def load(name: str = DEFAULT_NAME) -> PublisherKey:
    """The stored key; refuses one other users can read."""
    path = key_path(name)
    try:
        st = path.stat()
        pem = path.read_bytes()
    except FileNotFoundError as exc:
        raise PublisherKeyError(
            f"no publisher key {name!r} at {path}: run `ndnsci keys create`"
        ) from exc
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise PublisherKeyError(f"{path} is readable by others: chmod 600 {path}")
    return PublisherKey(name, pem)


def verify(public: bytes, message: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is the Ed25519 signature of ``message`` by the raw 32-byte
    ``public`` key (:mod:`ndnsci.ndn.ed25519`: the compiled extension's, else pure Python;
    pycryptodome's import would cost a fetch ~17 ms)."""
    from ndnsci.ndn import ed25519

    return ed25519.verify(public, message, signature)
