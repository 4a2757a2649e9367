// GET /search: one page of results (facet counts come from features/facets).
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { api, call } from "@/api/client";
import { queryString, withExtraParams } from "@/api/query-string";
import { routes } from "@/api/routes";
import type { FileSummary, SearchParameters } from "@/api/wire";
import { searchFilters } from "@/lib/search-query/query-string";
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
    site: file.site ?? null,
    facets: file.facets,
  };
}

/** One page: the filters, sorted and paged; no facet counts (the facet panel asks for them once per filter set). */
function pageQuery(query: SearchQuery): { declared: SearchParameters; facets: URLSearchParams } {
  const { declared, facets } = searchFilters(query);
  return { declared: { ...declared, sort: query.sort, offset: query.offset, limit: query.limit, facets: "" }, facets };
}

export async function searchFiles(query: SearchQuery, signal?: AbortSignal): Promise<SearchPage> {
  const { declared, facets } = pageQuery(query);
  const body = await call(
    (signal) =>
      api.GET(routes.search.path, { params: { query: declared }, querySerializer: withExtraParams(facets), signal }),
    { signal },
  );
  return { total: body.total, offset: body.offset, limit: body.limit, rows: body.results.map(toResultRow) };
}

export function useSearchFiles(query: SearchQuery) {
  const { declared, facets } = pageQuery(query);
  return useQuery({
    queryKey: ["search", queryString(declared, facets)],
    queryFn: ({ signal }) => searchFiles(query, signal),
    placeholderData: keepPreviousData,
  });
}
