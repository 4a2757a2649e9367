import { useCallback, useMemo } from "react";
import { navigateSearch, useLocationSearch } from "@/lib/location";
import { type PortalState, parsePortalState, serializePortalState } from "@/lib/search-query/query-string";
import type { SearchQuery } from "@/lib/search-query/types";

type Update = (state: PortalState) => PortalState;

/** The search and the open file, read from and written to the URL. */
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

  return { ...state, setQuery, openFile };
}
