import { RequestProblem } from "@/components/ui/RequestProblem";
import { SlowNotice } from "@/components/ui/SlowNotice";
import { toggleFacetValue } from "@/lib/search-query/query-string";
import type { SearchQuery } from "@/lib/search-query/types";
import { useFacetCounts } from "../api/get-facet-counts";
import { FOLDED } from "../facet-order";
import { FacetGroup } from "./FacetGroup";

interface FacetPanelProps {
  query: SearchQuery;
  onQuery: (change: (query: SearchQuery) => SearchQuery) => void;
}

export function FacetPanel({ query, onQuery }: FacetPanelProps) {
  const counts = useFacetCounts(query);
  const facets = counts.data?.facets.filter((f) => f.values.length > 0 || query.filters[f.key]) ?? [];
  return (
    <section className="facets" aria-labelledby="facets-heading" aria-busy={counts.isFetching}>
      <h2 id="facets-heading" className="panel-heading">
        Facets
      </h2>
      <SlowNotice active={counts.isFetching} what="facet counts" />
      {counts.isError ? (
        <RequestProblem error={counts.error} what="Counting facets" onRetry={() => void counts.refetch()} />
      ) : null}
      {counts.isPending ? <p className="hint">Counting…</p> : null}
      {counts.data && facets.length === 0 ? <p className="hint">No facets: nothing is published yet.</p> : null}
      {facets.map((facet) => (
        <FacetGroup
          key={facet.key}
          facet={facet}
          filter={query.filters[facet.key]}
          folded={FOLDED.has(facet.key)}
          onToggle={(value, on) => onQuery((s) => toggleFacetValue(s, facet.key, value, on))}
        />
      ))}
    </section>
  );
}
