"""REST API of the catalog, mounted under /api/v1."""
