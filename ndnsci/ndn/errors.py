"""Errors of the NDN data plane, one tree so callers can catch what they can act on.

::

    NdnError
     ├── InvalidNameError      a name URI or a name component is malformed
     ├── TransportError        no forwarder at NDN_CLIENT_TRANSPORT, or it went away
     ├── ForwarderError        the forwarder cannot be built, started, stopped or queried
     ├── PublisherKeyError             the publisher key is missing or unreadable
     └── FetchError            a retrieval failed
          ├── NotFoundError    the producer says the name does not exist, or nobody answers
          ├── IntegrityError   a signature, digest or file checksum does not match
          └── FetchTimeout     segments kept timing out beyond the retry budget
"""

from __future__ import annotations


class NdnError(Exception):
    """Base of every ndnsci data-plane error."""


class InvalidNameError(NdnError, ValueError):
    """A string is not a valid NDN name URI."""


class TransportError(NdnError, ConnectionError):
    """The forwarder cannot be reached, or closed the connection."""


class ForwarderError(NdnError):
    """The local NDNd forwarder cannot be managed."""


class PublisherKeyError(NdnError):
    """The publisher key is missing, unreadable or insecure."""


class FetchError(NdnError):
    """A file could not be retrieved."""


class NotFoundError(FetchError):
    """The name does not exist at the producer, or no producer answers for it."""


class IntegrityError(FetchError):
    """Received bytes do not match their signature, digest or the published checksum."""


class FetchTimeout(FetchError):
    """Interests kept timing out beyond the retransmission budget."""
