import { useCallback, useMemo } from "react";
import { navigateSearch, useLocationSearch } from "@/lib/location";
import { type PortalState, type PortalView, parsePortalState, serializePortalState } from "@/lib/search-query/query-string";
import type { SearchQuery } from "@/lib/search-query/types";

type Update = (state: PortalState) => PortalState;

/** The URL of a page of the portal (the search kept, for the way back). */
export function viewHref(state: PortalState, view: PortalView, job: number | null = null): string {
  const search = serializePortalState({ ...state, view, job });
  return `${window.location.pathname}${search ? `?${search}` : ""}`;
}

/** The search, the open file, the page and the open transfer job, read from and written to
 * the URL. */
export function usePortalState() {
  const search = useLocationSearch();
  const state = useMemo(() => parsePortalState(search), [search]);

  // always from the current URL, so two updates in one event both apply
  const update = useCallback((change: Update, options: { replace?: boolean } = {}) => {
    const current = parsePortalState(window.location.search);
    navigateSearch(serializePortalState(change(current)), options);
  }, []);

  const setQuery = useCallback(
    (change: (query: SearchQuery) => SearchQuery, options?: { replace?: boolean }) =>
      update((s) => ({ ...s, query: change(s.query) }), options),
    [update],
  );

  const openFile = useCallback((file: string | null) => update((s) => ({ ...s, file })), [update]);
  const openView = useCallback(
    (view: PortalView, job: number | null = null) => update((s) => ({ ...s, view, job })),
    [update],
  );

  return { ...state, setQuery, openFile, openView };
}
