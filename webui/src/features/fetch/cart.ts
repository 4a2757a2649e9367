// The cart: files chosen for download, kept in localStorage so it survives a reload (and is
// shared by the portal's tabs).
import { useCallback, useMemo } from "react";
import { useStoredString } from "@/lib/local-store";
import type { CartItem } from "./types";

export const CART_KEY = "ndnsci.cart.v1";
export const CART_LIMIT = 10_000;

/** Just the cart's fields of a result row or a file record (the cart is kept in localStorage). */
export function toCartItem({ name, fileName, size, sha256 }: CartItem): CartItem {
  return { name, fileName, size, sha256 };
}

export function parseCart(text: string | null): CartItem[] {
  if (!text) return [];
  try {
    const value: unknown = JSON.parse(text);
    if (!Array.isArray(value)) return [];
    return value.filter(
      (item): item is CartItem =>
        typeof item === "object" && item !== null && typeof (item as CartItem).name === "string" && typeof (item as CartItem).fileName === "string",
    );
  } catch {
    return [];
  }
}

export function useCart() {
  const [stored, setStored] = useStoredString(CART_KEY);
  const items = useMemo(() => parseCart(stored), [stored]);
  const names = useMemo(() => new Set(items.map((i) => i.name)), [items]);

  const write = useCallback((next: CartItem[]) => setStored(next.length ? JSON.stringify(next) : null), [setStored]);
  const add = useCallback(
    (more: CartItem[]) => {
      const fresh = more.filter((i) => !names.has(i.name));
      if (fresh.length) write([...items, ...fresh].slice(0, CART_LIMIT));
    },
    [items, names, write],
  );
  const remove = useCallback((gone: string[]) => write(items.filter((i) => !gone.includes(i.name))), [items, write]);
  const clear = useCallback(() => write([]), [write]);
  const has = useCallback((name: string) => names.has(name), [names]);

  return { items, has, add, remove, clear };
}
