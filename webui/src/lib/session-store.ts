// A value kept in sessionStorage: this tab only, gone when it closes (a secret such as the
// catalog token is never written to localStorage). Every component of the tab that reads it
// follows its changes.
import { useCallback, useSyncExternalStore } from "react";

const CHANGE = "ndnsci:sessionstore";
const memory = new Map<string, string | null>();

export function readSession(key: string): string | null {
  if (memory.has(key)) return memory.get(key)!;
  try {
    return window.sessionStorage.getItem(key);
  } catch {
    return null; // storage disabled: the value lives for this page only
  }
}

export function writeSession(key: string, value: string | null): void {
  memory.set(key, value);
  try {
    if (value === null) window.sessionStorage.removeItem(key);
    else window.sessionStorage.setItem(key, value);
    memory.delete(key);
  } catch {
    // disabled storage: keep it in memory
  }
  window.dispatchEvent(new CustomEvent(CHANGE, { detail: key }));
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener(CHANGE, onChange);
  return () => window.removeEventListener(CHANGE, onChange);
}

export function useSessionString(key: string): [string | null, (value: string | null) => void] {
  const value = useSyncExternalStore(
    subscribe,
    () => readSession(key),
    () => null,
  );
  const set = useCallback((next: string | null) => writeSession(key, next), [key]);
  return [value, set];
}
