// The order facets are shown in: each scheme's own, most selective first (what a climate or
// HEP user narrows by), then anything a new scheme adds, alphabetically.
const PREFERRED = [
  // federation: the site that published the file (set by the catalog, any scheme)
  "site",
  // CMIP5
  "institute", "model", "experiment", "frequency", "realm", "table", "ensemble", "variable",
  // CMIP6
  "activity_id", "institution_id", "source_id", "experiment_id", "member_id", "table_id",
  "variable_id", "grid_label",
  // CMS
  "area", "era", "primary_dataset", "tier", "processing",
  // shared, many values
  "product", "activity", "mip_era", "version", "time_range", "geo", "counter", "filename",
];

/** Facets with so many values that they start folded. */
export const FOLDED = new Set(["version", "time_range", "counter", "filename", "geo", "activity", "mip_era", "product"]);

export function orderFacets(keys: string[]): string[] {
  const rank = (key: string) => {
    const i = PREFERRED.indexOf(key);
    return i === -1 ? PREFERRED.length : i;
  };
  return [...keys].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}
