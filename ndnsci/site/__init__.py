"""What a site runs on top of the SDK, the catalog and the planes: the local stack (``ndnsci
up``) and serving the files a catalog has published."""
