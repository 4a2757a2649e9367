// The whole search lives in the page's query string, written the way the catalog's /search
// reads it (`?q=tas&model=HadCM3&model=CanESM2&experiment!=rcp85&sort=-size`), so a URL can be
// shared, reloaded, or pasted after /api/v1/search. The portal-only keys start with "_" (facet
// names cannot): `_file` names the file whose metadata is open, `_view=transfers` shows the
// Transfers page (the search stays in the URL for the way back) and `_job` the job open there.
import { queryString } from "@/api/query-string";
import type { SearchParameters } from "@/api/wire";
import type { FacetFilter, SearchQuery, SortKey } from "./types";

export const DEFAULT_SORT: SortKey = "name";
export const DEFAULT_LIMIT = 50;
export const PAGE_SIZES = [25, 50, 100, 200] as const;
export const SORTS: readonly { key: SortKey; label: string }[] = [
  { key: "name", label: "NDN name (A-Z)" },
  { key: "-name", label: "NDN name (Z-A)" },
  { key: "size", label: "Size (smallest first)" },
  { key: "-size", label: "Size (largest first)" },
  { key: "time_start", label: "Time coverage (oldest first)" },
  { key: "-time_start", label: "Time coverage (newest first)" },
  { key: "time_end", label: "Coverage end (earliest first)" },
  { key: "-time_end", label: "Coverage end (latest first)" },
  { key: "-published", label: "Recently published" },
  { key: "published", label: "First published" },
];
const SORT_KEYS = new Set<string>(SORTS.map((s) => s.key));
const TYPED = new Set(["q", "prefix", "start", "end", "scheme", "sort", "offset", "limit", "facets", "facet_limit"]);
export const FILE_KEY = "_file";
export const VIEW_KEY = "_view";
export const JOB_KEY = "_job";

/** The portal's pages: the search (its default) and the transfer jobs. */
export type PortalView = "search" | "transfers";

export interface PortalState {
  query: SearchQuery;
  /** NDN name of the file whose metadata panel is open */
  file: string | null;
  view: PortalView;
  /** the transfer job open on the Transfers page */
  job: number | null;
}

export function emptyQuery(): SearchQuery {
  return {
    q: "",
    prefix: "",
    start: "",
    end: "",
    schemes: [],
    filters: {},
    sort: DEFAULT_SORT,
    offset: 0,
    limit: DEFAULT_LIMIT,
  };
}

function nonNegativeInt(text: string | null, fallback: number, max: number): number {
  if (text === null || !/^\d+$/.test(text)) return fallback;
  return Math.min(Number(text), max);
}

export function parsePortalState(search: string): PortalState {
  const params = new URLSearchParams(search);
  const query = emptyQuery();
  query.q = params.get("q") ?? "";
  query.prefix = params.get("prefix") ?? "";
  query.start = params.get("start") ?? "";
  query.end = params.get("end") ?? "";
  query.schemes = params.getAll("scheme").filter(Boolean);
  const sort = params.get("sort");
  if (sort && SORT_KEYS.has(sort)) query.sort = sort as SortKey;
  query.offset = nonNegativeInt(params.get("offset"), 0, 1_000_000_000);
  query.limit = nonNegativeInt(params.get("limit"), DEFAULT_LIMIT, 1000) || DEFAULT_LIMIT;
  for (const [rawKey, value] of params) {
    if (TYPED.has(rawKey) || rawKey.startsWith("_") || value === "") continue;
    const exclude = rawKey.endsWith("!");
    const key = exclude ? rawKey.slice(0, -1) : rawKey;
    if (!key) continue;
    const filter = (query.filters[key] ??= { include: [], exclude: [] });
    const list = exclude ? filter.exclude : filter.include;
    if (!list.includes(value)) list.push(value);
  }
  const view: PortalView = params.get(VIEW_KEY) === "transfers" ? "transfers" : "search";
  const jobText = params.get(JOB_KEY);
  const job = view === "transfers" && jobText && /^[1-9]\d{0,15}$/.test(jobText) ? Number(jobText) : null;
  return { query, file: params.get(FILE_KEY) || null, view, job };
}

/** The filters as the catalog's /search reads them (no paging, sorting or facet options). */
export interface SearchFilters {
  /** the parameters the OpenAPI document declares, typed by it */
  declared: Pick<SearchParameters, "q" | "prefix" | "start" | "end" | "scheme">;
  /** the facet filters, named after the facets (`model=A`, `model!=B`), so never declared */
  facets: URLSearchParams;
}

export function searchFilters(query: SearchQuery): SearchFilters {
  const facets = new URLSearchParams();
  for (const key of Object.keys(query.filters).sort()) {
    const filter = query.filters[key]!;
    for (const value of filter.include) facets.append(key, value);
    for (const value of filter.exclude) facets.append(`${key}!`, value);
  }
  const declared = {
    q: query.q.trim() || undefined,
    prefix: query.prefix || undefined,
    start: query.start.trim() || undefined,
    end: query.end.trim() || undefined,
    scheme: query.schemes.length ? query.schemes : undefined,
  };
  return { declared, facets };
}

/** The filters as one /search query string (also the portal URL's, and a manifest's `search`). */
export function filterParams(query: SearchQuery): URLSearchParams {
  const { declared, facets } = searchFilters(query);
  return new URLSearchParams(queryString(declared, facets));
}

export function serializePortalState({
  query,
  file,
  view = "search",
  job = null,
}: Omit<PortalState, "view" | "job"> & Partial<Pick<PortalState, "view" | "job">>): string {
  const params = filterParams(query);
  if (query.sort !== DEFAULT_SORT) params.set("sort", query.sort);
  if (query.offset) params.set("offset", String(query.offset));
  if (query.limit !== DEFAULT_LIMIT) params.set("limit", String(query.limit));
  if (file) params.set(FILE_KEY, file);
  if (view === "transfers") {
    params.set(VIEW_KEY, view);
    if (job !== null) params.set(JOB_KEY, String(job));
  }
  return params.toString();
}

export function hasFilters(query: SearchQuery): boolean {
  return filterParams(query).toString() !== "";
}

/** A copy with one facet value switched on or off (back to the first page). */
export function toggleFacetValue(query: SearchQuery, key: string, value: string, on: boolean): SearchQuery {
  const filters: Record<string, FacetFilter> = { ...query.filters };
  const current = filters[key] ?? { include: [], exclude: [] };
  const include = current.include.filter((v) => v !== value);
  if (on) include.push(value);
  const next = { include, exclude: current.exclude.filter((v) => v !== value) };
  if (next.include.length || next.exclude.length) filters[key] = next;
  else delete filters[key];
  return { ...query, filters, offset: 0 };
}

export function removeExclusion(query: SearchQuery, key: string, value: string): SearchQuery {
  const filters = { ...query.filters };
  const current = filters[key];
  if (!current) return query;
  const next = { include: current.include, exclude: current.exclude.filter((v) => v !== value) };
  if (next.include.length || next.exclude.length) filters[key] = next;
  else delete filters[key];
  return { ...query, filters, offset: 0 };
}
