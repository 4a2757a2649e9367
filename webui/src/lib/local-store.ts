// A value kept in localStorage and shared by every component (and tab) that reads it.
import { useCallback, useSyncExternalStore } from "react";

const CHANGE = "ndnsci:localstore";

function read(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null; // storage disabled: the value lives for this page only
  }
}

const memory = new Map<string, string | null>();

export function readStored(key: string): string | null {
  return memory.has(key) ? memory.get(key)! : read(key);
}

export function writeStored(key: string, value: string | null): void {
  memory.set(key, value);
  try {
    if (value === null) window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, value);
    memory.delete(key);
  } catch {
    // quota or disabled storage: keep it in memory
  }
  window.dispatchEvent(new CustomEvent(CHANGE, { detail: key }));
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener("storage", onChange);
  window.addEventListener(CHANGE, onChange);
  return () => {
    window.removeEventListener("storage", onChange);
    window.removeEventListener(CHANGE, onChange);
  };
}

export function useStoredString(key: string): [string | null, (value: string | null) => void] {
  const value = useSyncExternalStore(
    subscribe,
    () => readStored(key),
    () => null,
  );
  const set = useCallback((next: string | null) => writeStored(key, next), [key]);
  return [value, set];
}
