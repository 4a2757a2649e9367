export interface Correction {
  rule: string;
  message: string;
}

export interface VariableInfo {
  name: string;
  units: string | null;
  longName: string | null;
  standardName: string | null;
  dtype: string | null;
  dimensions: string[];
  shape: number[];
}

export interface DimensionInfo {
  name: string;
  size: number | null;
  unlimited: boolean;
}

export interface TimeInfo {
  start: string | null;
  end: string | null;
  first: string | null;
  last: string | null;
  calendar: string | null;
  units: string | null;
  steps: number | null;
}

export interface SpatialInfo {
  south: number;
  north: number;
  west: number;
  east: number;
}

export interface HistoryItem {
  version: string | null;
  seq: number;
  replacedAt: string;
  size: number | null;
  sha256: string | null;
}

/** Everything the metadata panel shows about one file. */
export interface FileDetails {
  name: string;
  /** the canonical file name (the NDN name's last component) */
  fileName: string;
  /** the file name before corrections */
  original: string;
  /** the path below the directory it was published from, before corrections; null if unknown */
  originalPath: string | null;
  scheme: string;
  size: number | null;
  sha256: string | null;
  version: string | null;
  publishedAt: string;
  /** the federation site that published the file; null in a catalog without a site name */
  site: string | null;
  /** root://HOST:PORT//store/... for a CMS file when the catalog knows an XRootD server on NDN */
  xrootdUrl: string | null;
  format: string | null;
  facets: [string, string][];
  corrections: Correction[];
  time: TimeInfo | null;
  spatial: SpatialInfo | null;
  dimensions: DimensionInfo[];
  variables: VariableInfo[];
  globalAttributes: [string, string][];
  warnings: string[];
  history: HistoryItem[];
  /** the file was published by name only: no header was read */
  nameOnly: boolean;
}
