export interface FacetValueCount {
  value: string;
  count: number;
}

export interface FacetCounts {
  key: string;
  values: FacetValueCount[];
}
