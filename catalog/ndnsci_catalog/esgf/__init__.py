"""The ESGF search API (esg-search) over the catalog: the same files, ESGF's words and shapes.

| module | what |
|---|---|
| :mod:`.vocabulary` | projects, ESGF facet names, dataset and file ids (ESGF <-> catalog) |
| :mod:`.request` | an ``/esg-search/search`` query string -> what to search and how to answer |
| :mod:`.datasets` | files grouped into ESGF datasets over the facet index (counts, latest) |
| :mod:`.search` | the search itself: the catalog's :class:`~ndnsci_catalog.query.Search` |
| :mod:`.solr` | the answer as Solr JSON or Solr XML |
| :mod:`.wget` | ``/esg-search/wget``: the download script |

Design and the differences from an ESGF index node: docs/esgf.md.
"""
