"""TLS for the catalog server: checking a certificate and key before serving with them, and
the client context that trusts exactly that certificate (a site's own health checks).

uvicorn loads the certificate only as its server starts, and a bad one is then a traceback in
the log of a process that exits; :func:`problem` loads the pair the same way beforehand
(``ssl.SSLContext.load_cert_chain``), so ``ndnsci catalog serve`` and ``ndnsci site check`` can
say in one line what is wrong. ``ssl`` is imported when a function is called: the command
line's start-up does not pay for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl


@dataclass(frozen=True)
class Problem:
    """What is wrong, and with which file (``"cert"`` or ``"key"``: a site's configuration
    names the key that is wrong)."""

    file: str
    message: str

    def __str__(self) -> str:
        return self.message


def problem(cert: str | os.PathLike[str], key: str | os.PathLike[str]) -> Problem | None:
    """What is wrong with serving TLS with ``cert`` and ``key`` (PEM files), or None.

    The key must not need a passphrase: the server starts unattended, and OpenSSL would ask
    for one on the terminal.
    """
    import ssl

    for file, what, path in (("cert", "certificate", cert), ("key", "key", key)):
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            return Problem(file, f"cannot read the TLS {what} {path}: {exc.strerror or exc}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key, password=_no_passphrase)
    except _Passphrase:
        return Problem(
            "key", f"the TLS key {key} is encrypted: write one without a passphrase (openssl pkey)"
        )
    except ssl.SSLError as exc:
        reason = (exc.reason or "").upper()
        if "MISMATCH" in reason:
            return Problem("key", f"the TLS key {key} is not the key of the certificate {cert}")
        if not _pem(cert, "CERTIFICATE"):
            return Problem("cert", f"{cert} is not a PEM certificate (-----BEGIN CERTIFICATE-----)")
        if not _pem(key, "PRIVATE KEY"):
            return Problem(
                "key", f"{key} is not a PEM private key (-----BEGIN ... PRIVATE KEY-----)"
            )
        return Problem(
            "cert", f"the TLS certificate {cert} and key {key} cannot be used: {exc.reason or exc}"
        )
    return None


class _Passphrase(Exception):
    pass


def _no_passphrase() -> bytes:
    raise _Passphrase


def _pem(path: str | os.PathLike[str], label: str) -> bool:
    try:
        with open(path, "rb") as file:
            text = file.read(1 << 20)
    except OSError:
        return False
    return b"-----BEGIN " in text and label.encode() in text


def pinned(cert: str | os.PathLike[str]) -> ssl.SSLContext:
    """A client context trusting ``cert`` itself (self-signed or issued by a CA), and nothing
    else: the server must present that very certificate. Its host name is not checked: the
    server is asked at its listen address, which a CA's certificate does not name; presenting
    the configured certificate is the proof that it is the server started with it."""
    import ssl

    context = ssl.create_default_context(cafile=os.fspath(cert))
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # a leaf as its own trust anchor
    context.check_hostname = False
    return context
