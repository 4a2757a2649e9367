"""Alembic environment and versions of the catalog schema (run by :mod:`ndnsci_catalog.migrate`)."""
