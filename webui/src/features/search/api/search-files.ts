// GET /search: one page of results (facet counts come from features/facets).
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getJson } from "@/api/client";
import { routes } from "@/api/routes";
import type { FileSummary, SearchResponse } from "@/api/wire";
import { filterParams } from "@/lib/search-query/query-string";
import type { SearchQuery } from "@/lib/search-query/types";
import type { ResultRow, SearchPage } from "../types";

export function toResultRow(file: FileSummary): ResultRow {
  const fileName = file.filename ?? file.name.slice(file.name.lastIndexOf("/") + 1);
  return {
    name: file.name,
    fileName,
    original: file.original || fileName,
    scheme: file.scheme,
    size: file.size ?? null,
    sha256: file.sha256 ?? null,
    timeStart: file.time_start ?? null,
    timeEnd: file.time_end ?? null,
    facets: file.facets,
  };
}

export function searchParams(query: SearchQuery): URLSearchParams {
  const params = filterParams(query);
  params.set("sort", query.sort);
  params.set("offset", String(query.offset));
  params.set("limit", String(query.limit));
  params.set("facets", ""); // no counts here: the facet panel asks for them once per filter set
  return params;
}

export async function searchFiles(query: SearchQuery, signal?: AbortSignal): Promise<SearchPage> {
  const body = await getJson<SearchResponse>(routes.search(searchParams(query)), { signal });
  return { total: body.total, offset: body.offset, limit: body.limit, rows: body.results.map(toResultRow) };
}

export function useSearchFiles(query: SearchQuery) {
  return useQuery({
    queryKey: ["search", searchParams(query).toString()],
    queryFn: ({ signal }) => searchFiles(query, signal),
    placeholderData: keepPreviousData,
  });
}
