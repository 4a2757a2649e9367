// Every call the portal makes to the catalog, in one table: method and path, checked against
// the catalog's OpenAPI document (src/api/generated/schema.ts), so a renamed or removed route
// fails the type check here. Calls go through `api` (client.ts) with these paths, which types
// their parameters and answers; the unit tests' msw handlers are built from this table.
import type { paths } from "./generated/schema";

type Method = "get" | "post" | "delete";
type RouteTo<P extends keyof paths> = {
  [M in Method]: paths[P][M] extends undefined ? never : { readonly method: M; readonly path: P };
}[Method];
/** A method and a path the OpenAPI document has. */
export type Route = { [P in keyof paths]: RouteTo<P> }[keyof paths];

export const routes = {
  search: { method: "get", path: "/api/v1/search" },
  autocomplete: { method: "get", path: "/api/v1/autocomplete" },
  tree: { method: "get", path: "/api/v1/tree" },
  file: { method: "get", path: "/api/v1/files/{name}" },
  manifests: { method: "post", path: "/api/v1/manifests" },
  health: { method: "get", path: "/api/v1/health" },
  stats: { method: "get", path: "/api/v1/stats" },
  transfers: { method: "get", path: "/api/v1/transfers" },
  submitTransfer: { method: "post", path: "/api/v1/transfers" },
  transfer: { method: "get", path: "/api/v1/transfers/{job_id}" },
  transferFiles: { method: "get", path: "/api/v1/transfers/{job_id}/files" },
  cancelTransfer: { method: "delete", path: "/api/v1/transfers/{job_id}" },
  retryTransfer: { method: "post", path: "/api/v1/transfers/{job_id}/retry" },
  /** server-sent events (EventSource, not `api`): `event: job` with the job at each change */
  transferEvents: { method: "get", path: "/api/v1/transfers/{job_id}/events" },
} as const satisfies Record<string, Route>;

export type RouteName = keyof typeof routes;

/** The NDN URI as a URL path: each component percent-encoded once (the catalog decodes once). */
export function encodeName(name: string): string {
  return name
    .split("/")
    .filter((component) => component !== "")
    .map(encodeURIComponent)
    .join("/");
}
