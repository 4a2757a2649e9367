import type { SearchQuery } from "@/lib/search-query/types";
import { emptyQuery, hasFilters, removeExclusion, toggleFacetValue } from "@/lib/search-query/query-string";

interface Chip {
  id: string;
  label: string;
  remove: (query: SearchQuery) => SearchQuery;
}

function chips(query: SearchQuery): Chip[] {
  const out: Chip[] = [];
  if (query.q.trim()) out.push({ id: "q", label: `text: ${query.q.trim()}`, remove: (s) => ({ ...s, q: "", offset: 0 }) });
  if (query.prefix) out.push({ id: "prefix", label: `name: ${query.prefix}`, remove: (s) => ({ ...s, prefix: "", offset: 0 }) });
  if (query.start) out.push({ id: "start", label: `from ${query.start}`, remove: (s) => ({ ...s, start: "", offset: 0 }) });
  if (query.end) out.push({ id: "end", label: `until ${query.end}`, remove: (s) => ({ ...s, end: "", offset: 0 }) });
  for (const scheme of query.schemes) {
    out.push({
      id: `scheme=${scheme}`,
      label: `scheme: ${scheme}`,
      remove: (s) => ({ ...s, schemes: s.schemes.filter((x) => x !== scheme), offset: 0 }),
    });
  }
  for (const [key, filter] of Object.entries(query.filters)) {
    for (const value of filter.include) {
      out.push({ id: `${key}=${value}`, label: `${key}: ${value}`, remove: (s) => toggleFacetValue(s, key, value, false) });
    }
    for (const value of filter.exclude) {
      out.push({ id: `${key}!=${value}`, label: `${key}: not ${value}`, remove: (s) => removeExclusion(s, key, value) });
    }
  }
  return out;
}

interface ActiveFiltersProps {
  query: SearchQuery;
  onChange: (change: (query: SearchQuery) => SearchQuery) => void;
}

/** What narrows the results now, each removable; the same list explains an empty result. */
export function ActiveFilters({ query, onChange }: ActiveFiltersProps) {
  if (!hasFilters(query)) return null;
  return (
    <ul className="chips" aria-label="Active filters">
      {chips(query).map((chip) => (
        <li key={chip.id} className="chip">
          <span>{chip.label}</span>
          <button
            type="button"
            className="chip-remove"
            aria-label={`Remove filter ${chip.label}`}
            onClick={() => onChange(chip.remove)}
          >
            ×
          </button>
        </li>
      ))}
      <li>
        <button
          type="button"
          className="link-button"
          onClick={() => onChange((s) => ({ ...emptyQuery(), sort: s.sort, limit: s.limit }))}
        >
          Clear all filters
        </button>
      </li>
    </ul>
  );
}
