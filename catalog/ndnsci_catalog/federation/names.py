"""The NDN names of the federation (docs/federation.md, "Names").

- ``<site prefix>/catalog/changes/t=<boot>/seq=<n>``: batch ``n`` of a site's changes, an
  RDR object (``32=metadata``, then ``v=1/seg=<k>``) as ``ndnsci serve`` and ``ndnd put``
  serve files, so ``ndnd cat`` reads it too;
- ``<site prefix>/catalog/32=key/<key id>``: the site's public key (KeyLocator of the metadata);
- ``<group>/v=3``: State Vector Sync v3 Interests of the group every site joins (default
  ``/ndnsci/catalog/sync``); each site's node name in the state vector is its prefix.
"""

from __future__ import annotations

from ndnsci.ndn import name, tlv

DEFAULT_GROUP = "/ndnsci/catalog/sync"
CATALOG = tlv.generic("catalog")
CHANGES = tlv.generic("changes")
#: batches never change once written: one version for all
BATCH_VERSION = 1


def catalog_prefix(site_prefix: str) -> list[bytes]:
    return [*name.from_uri(site_prefix), CATALOG]


def batch_name(site_prefix: str, boot: int, number: int) -> str:
    """The URI of batch ``number`` of the site at ``site_prefix`` (boot ``boot``)."""
    components = [
        *catalog_prefix(site_prefix),
        CHANGES,
        tlv.component(tlv.TIMESTAMP, tlv.nni(boot)),
        tlv.component(tlv.SEQUENCE_NUM, tlv.nni(number)),
    ]
    return name.to_uri(components)
