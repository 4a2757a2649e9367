"""Errors of the NDN data plane: the ``NdnError`` branch of :mod:`ndnsci.errors`.

::

    NdnError
     ├── InvalidNameError      a name URI or a name component is malformed
     ├── TransportError        no forwarder at NDN_CLIENT_TRANSPORT, or it went away
     ├── ForwarderError        the forwarder cannot be built, started, stopped or queried
     ├── PublisherKeyError     the publisher key is missing or unreadable
     └── FetchError            a retrieval failed
          ├── NotFoundError    the producer says the name does not exist, or nobody answers
          ├── IntegrityError   a signature, digest or file checksum does not match
          └── FetchTimeout     segments kept timing out beyond the retry budget

They are defined in :mod:`ndnsci.errors` (one tree for the whole package) and re-exported here
so the data plane's modules import them from beside themselves.
"""

from __future__ import annotations

from ..errors import (
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
