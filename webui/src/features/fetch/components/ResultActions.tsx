import { RequestProblem } from "@/components/ui/RequestProblem";
import { saveBlob } from "@/lib/save-file";
import { MANIFEST_FILE, useCreateManifest } from "../api/create-manifest";
import { toCartItem, useCart } from "../cart";
import type { CartItem } from "../types";

interface ResultActionsProps {
  /** the page of results (anything with a cart item's fields) */
  rows: CartItem[];
  total: number;
  /** the search as a /search query string, for a manifest of every result */
  search: string;
}

/** What to do with the results as a whole: cart the page, or a manifest of every match. */
export function ResultActions({ rows, total, search }: ResultActionsProps) {
  const cart = useCart();
  const manifest = useCreateManifest();
  const missing = rows.filter((r) => !cart.has(r.name));
  return (
    <>
      <button type="button" className="button" disabled={missing.length === 0} onClick={() => cart.add(missing.map(toCartItem))}>
        {missing.length === 0 ? "Page in cart" : "Add page to cart"}
      </button>
      <button
        type="button"
        className="button"
        disabled={manifest.isPending}
        onClick={() => manifest.mutate({ search }, { onSuccess: (blob) => saveBlob(blob, MANIFEST_FILE) })}
        title="A manifest of every file matching this search, for ndnsci fetch --manifest"
      >
        {manifest.isPending ? "Preparing…" : `Manifest of all ${total}`}
      </button>
      {manifest.isError ? <RequestProblem error={manifest.error} what="Making the manifest" /> : null}
    </>
  );
}
