// The page's query string as React state: pushState/replaceState plus popstate, no router.
import { useSyncExternalStore } from "react";

const CHANGE = "ndnsci:locationchange";

function subscribe(onChange: () => void): () => void {
  window.addEventListener("popstate", onChange);
  window.addEventListener(CHANGE, onChange);
  return () => {
    window.removeEventListener("popstate", onChange);
    window.removeEventListener(CHANGE, onChange);
  };
}

const snapshot = () => window.location.search;

export function useLocationSearch(): string {
  return useSyncExternalStore(subscribe, snapshot, snapshot);
}

/** Go to `?search` (an entry in the history, or in place with `replace`). */
export function navigateSearch(search: string, { replace = false } = {}): void {
  const url = `${window.location.pathname}${search ? `?${search}` : ""}${window.location.hash}`;
  if (url === `${window.location.pathname}${window.location.search}${window.location.hash}`) return;
  if (replace) window.history.replaceState(null, "", url);
  else window.history.pushState(null, "", url);
  window.dispatchEvent(new Event(CHANGE));
}
