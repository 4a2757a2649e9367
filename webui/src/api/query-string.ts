// Query strings of catalog calls, written the way URLSearchParams writes them (and the portal's
// own URL, which a user can paste after /api/v1/search).

/**
 * A query string as URLSearchParams writes it (repeated keys for lists, null and undefined
 * left out), then `extra`: parameters the OpenAPI document cannot declare, such as the
 * facet filters of /search, which are named after the facets (`model=A`, `model!=B`).
 */
export function queryString(declared: Record<string, unknown>, extra?: URLSearchParams): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(declared)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && item !== null) params.append(key, String(item));
    }
  }
  extra?.forEach((value, key) => params.append(key, value));
  return params.toString();
}

/** A call's querySerializer that adds undeclared parameters (see queryString). */
export const withExtraParams = (extra: URLSearchParams) => (declared: Record<string, unknown>) =>
  queryString(declared, extra);
