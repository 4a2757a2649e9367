// GET /search?limit=0: live counts of every facet under the current filters (ESGF style: a
// facet's counts ignore its own filter). Paging and sorting do not refetch them.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { api, call } from "@/api/client";
import { withExtraParams } from "@/api/query-string";
import { routes } from "@/api/routes";
import { filterParams, searchFilters } from "@/lib/search-query/query-string";
import type { SearchQuery } from "@/lib/search-query/types";
import { orderFacets } from "../facet-order";
import type { FacetCounts } from "../types";

export interface FacetSummary {
  total: number;
  facets: FacetCounts[];
}

export async function getFacetCounts(query: SearchQuery, signal?: AbortSignal): Promise<FacetSummary> {
  const { declared, facets } = searchFilters(query);
  const body = await call(
    (signal) =>
      api.GET(routes.search.path, {
        params: { query: { ...declared, limit: 0, facet_limit: 500 } },
        querySerializer: withExtraParams(facets),
        signal,
      }),
    { signal },
  );
  const counts = orderFacets(Object.keys(body.facets)).map((key) => ({
    key,
    values: Object.entries(body.facets[key] ?? {}).map(([value, count]) => ({ value, count })),
  }));
  return { total: body.total, facets: counts };
}

export function useFacetCounts(query: SearchQuery) {
  const key = filterParams(query).toString();
  return useQuery({
    queryKey: ["facets", key],
    queryFn: ({ signal }) => getFacetCounts(query, signal),
    placeholderData: keepPreviousData,
  });
}
