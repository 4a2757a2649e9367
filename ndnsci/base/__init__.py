"""The floor every other layer may import: the environment ndnsci reads, digests, processes."""
