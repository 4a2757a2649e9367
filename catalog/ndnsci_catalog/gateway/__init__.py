"""The HTTP gateway to NDN data: ``GET /data/<NDN name>`` fetches the file over NDN and streams it.

| module | what |
|---|---|
| :mod:`.ranges` | the ``Range`` header of a request (one range; RFC 9110) |
| :mod:`.stream` | a byte range of a file as segments fetched over NDN, in order, memory bounded |
| :mod:`.app` | the routes, mounted on the catalog's app or served alone (``ndnsci gateway``) |
| :mod:`.quicklook` | ``/api/v1/quicklook/<NDN name>``: a file's maps and global means (PNG) |

Above the catalog and the data plane: it looks names up in the catalog and fetches them with
the consumer of :mod:`ndnsci.ndn`. Design: docs/esgf.md.
"""
