// GET /search?limit=0: live counts of every facet under the current filters (ESGF style: a
// facet's counts ignore its own filter). Paging and sorting do not refetch them.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getJson } from "@/api/client";
import { routes } from "@/api/routes";
import type { SearchResponse } from "@/api/wire";
import { filterParams } from "@/lib/search-query/query-string";
import type { SearchQuery } from "@/lib/search-query/types";
import { orderFacets } from "../facet-order";
import type { FacetCounts } from "../types";

export interface FacetSummary {
  total: number;
  facets: FacetCounts[];
}

export async function getFacetCounts(query: SearchQuery, signal?: AbortSignal): Promise<FacetSummary> {
  const params = filterParams(query);
  params.set("limit", "0");
  params.set("facet_limit", "500");
  const body = await getJson<SearchResponse>(routes.search(params), { signal });
  const facets = orderFacets(Object.keys(body.facets)).map((key) => ({
    key,
    values: Object.entries(body.facets[key] ?? {}).map(([value, count]) => ({ value, count })),
  }));
  return { total: body.total, facets };
}

export function useFacetCounts(query: SearchQuery) {
  const key = filterParams(query).toString();
  return useQuery({
    queryKey: ["facets", key],
    queryFn: ({ signal }) => getFacetCounts(query, signal),
    placeholderData: keepPreviousData,
  });
}
