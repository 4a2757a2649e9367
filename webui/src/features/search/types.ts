// UI types of a search: what the URL holds and the results table shows.
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

export interface ResultRow {
  name: string;
  /** the canonical file name (the NDN name's last component) */
  fileName: string;
  /** the file name before the translator's corrections (the KISTI portal's "original name") */
  original: string;
  scheme: string;
  size: number | null;
  sha256: string | null;
  timeStart: string | null;
  timeEnd: string | null;
  facets: Record<string, string | null>;
}

export interface SearchPage {
  total: number;
  offset: number;
  limit: number;
  rows: ResultRow[];
}
