"""The SDK behind ``ndnsci``'s public names: the catalog client, the fetch engine and its
transports, manifests, reports, progress, datasets, publishing batches, samples."""
