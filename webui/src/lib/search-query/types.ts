// The search as the app holds it: what the URL says, what every feature reads.
import type { SortKey } from "@/api/wire";

export type { SortKey };

export interface FacetFilter {
  include: string[];
  exclude: string[];
}

export interface SearchQuery {
  q: string;
  /** NDN name prefix, "" for none */
  prefix: string;
  /** time-coverage overlap bounds as typed (1850, 1850-01, 18500116), "" for none */
  start: string;
  end: string;
  schemes: string[];
  filters: Record<string, FacetFilter>;
  sort: SortKey;
  offset: number;
  limit: number;
}
