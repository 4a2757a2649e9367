"""Catalog service (FastAPI + SQLAlchemy 2): publish, search, autocomplete, manifests."""
