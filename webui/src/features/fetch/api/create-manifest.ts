// POST /manifests: JSON lines (name, size, sha256, filename, path) for `ndnsci fetch --manifest`.
import { useMutation } from "@tanstack/react-query";
import { api, call } from "@/api/client";
import { routes } from "@/api/routes";
import type { ManifestRequest } from "@/api/wire";

export const MANIFEST_FILE = "ndnsci-manifest.jsonl";

export function fetchCommand(file = MANIFEST_FILE): string {
  return `ndnsci fetch --manifest ${file}`;
}

export async function createManifest(request: ManifestRequest): Promise<Blob> {
  const blob = await call((signal) =>
    api.POST(routes.manifests.path, {
      body: request,
      parseAs: "blob",
      headers: { Accept: "application/x-ndjson, application/json" },
      signal,
    }),
  );
  return new Blob([blob], { type: "application/x-ndjson" });
}

export function useCreateManifest() {
  return useMutation({ mutationFn: createManifest });
}
