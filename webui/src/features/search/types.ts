// UI types of the search feature: what the results table shows.

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
  /** the federation site that published the file; null in a catalog without a site name */
  site: string | null;
  facets: Record<string, string | null>;
}

export interface SearchPage {
  total: number;
  offset: number;
  limit: number;
  rows: ResultRow[];
}
