"""The NDN data plane: lean TLV codec, forwarder face, producer (``serve``), consumer (``fetch``).

Importing this package is light (stdlib only); python-ndn, pycryptodomex and rich are imported
inside the functions that need them.
"""

from __future__ import annotations

from .errors import (
    FetchError,
    FetchTimeout,
    ForwarderError,
    IntegrityError,
    InvalidNameError,
    NdnError,
    NotFoundError,
    PublisherKeyError,
    TransportError,
)

__all__ = [
    "FetchError",
    "FetchTimeout",
    "ForwarderError",
    "IntegrityError",
    "InvalidNameError",
    "NdnError",
    "NotFoundError",
    "PublisherKeyError",
    "TransportError",
]
