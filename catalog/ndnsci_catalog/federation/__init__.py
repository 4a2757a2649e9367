"""Federated catalogs: each site publishes its catalog's changes as signed NDN data, announced
by State Vector Sync; the other sites fetch, verify and apply them (HTTP as a fallback).

Above both :mod:`ndnsci_catalog` (whose ingest applies the changes) and :mod:`ndnsci.ndn` (the
data plane that moves them). Design: docs/federation.md.
"""
