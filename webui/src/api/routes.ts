// Every call the portal makes to the catalog, in one table. Paths come from the catalog's
// OpenAPI document (src/api/generated/schema.ts); a renamed path fails the type check here.
import type { paths } from "./generated/schema";

export const API_BASE = "/api/v1";

type ApiPath = keyof paths;
const path = <P extends ApiPath>(p: P): P => p;

/** The NDN URI as a URL path: each component percent-encoded once (the catalog decodes once). */
export function encodeName(name: string): string {
  return name
    .split("/")
    .filter((component) => component !== "")
    .map(encodeURIComponent)
    .join("/");
}

function withQuery(base: string, query?: URLSearchParams): string {
  const text = query?.toString();
  return text ? `${base}?${text}` : base;
}

export const routes = {
  search: (query: URLSearchParams) => withQuery(path("/api/v1/search"), query),
  autocomplete: (prefix: string, limit = 50) =>
    withQuery(path("/api/v1/autocomplete"), new URLSearchParams({ prefix, limit: String(limit) })),
  tree: (treePath: string, limit = 200) =>
    withQuery(path("/api/v1/tree"), new URLSearchParams({ path: treePath, limit: String(limit) })),
  file: (name: string) => path("/api/v1/files/{name}").replace("{name}", encodeName(name)),
  manifests: () => path("/api/v1/manifests"),
  health: () => path("/api/v1/health"),
  stats: () => path("/api/v1/stats"),
} as const;
