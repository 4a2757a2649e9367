"""The NDN data plane: lean TLV codec, forwarder face, producer (``serve``), consumer (``fetch``).

Importing this package is light (stdlib only); python-ndn, pycryptodomex and rich are imported
inside the functions that need them. Its errors are the ``NdnError`` branch of
:mod:`ndnsci.errors`.
"""
