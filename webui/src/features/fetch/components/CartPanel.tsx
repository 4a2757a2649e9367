import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import { CopyButton } from "@/components/ui/CopyButton";
import { Notice } from "@/components/ui/Notice";
import { RequestProblem } from "@/components/ui/RequestProblem";
import { formatBytes, plural } from "@/lib/format";
import { isWebSocketUrl, useForwarderUrl } from "@/lib/forwarder-url";
import { saveBlob } from "@/lib/save-file";
import { fetchCommand, MANIFEST_FILE, useCreateManifest } from "../api/create-manifest";
import { useCart } from "../cart";
import type { DownloadState } from "../types";
import { useNdnDownloads } from "../use-ndn-downloads";

interface CartPanelProps {
  onClose: () => void;
  onOpenFile: (name: string) => void;
  /** a way to send the cart to a site (the app's transfer form), shown as the third way */
  transfer?: ReactNode;
}

const STATUS_TEXT: Record<DownloadState["status"], string> = {
  queued: "waiting",
  connecting: "connecting to the forwarder",
  discovering: "asking for the file's metadata",
  fetching: "fetching",
  verified: "verified",
  unverified: "fetched (not verified)",
  mismatch: "checksum mismatch",
  failed: "failed",
  cancelled: "cancelled",
};

/** The cart: the chosen files and the three ways to get them. */
export function CartPanel({ onClose, onOpenFile, transfer }: CartPanelProps) {
  const cart = useCart();
  const manifest = useCreateManifest();
  const [forwarder, setForwarder] = useForwarderUrl();
  const [forwarderText, setForwarderText] = useState(forwarder);
  const downloads = useNdnDownloads(forwarder);
  const heading = useRef<HTMLHeadingElement>(null);
  const id = useId();
  useEffect(() => heading.current?.focus(), []);
  useEffect(() => setForwarderText(forwarder), [forwarder]);

  const totalBytes = cart.items.reduce((sum, i) => sum + (i.size ?? 0), 0);
  const downloadManifest = () =>
    manifest.mutate({ names: cart.items.map((i) => i.name) }, { onSuccess: (blob) => saveBlob(blob, MANIFEST_FILE) });
  const forwarderValid = isWebSocketUrl(forwarderText.trim());

  return (
    <section className="cart" aria-label="Cart" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <div className="panel-bar">
        <h2 className="panel-heading" tabIndex={-1} ref={heading}>
          Cart
        </h2>
        <button type="button" className="button button-small" onClick={onClose} aria-label="Close cart">
          Close ✕
        </button>
      </div>
      {cart.items.length === 0 ? (
        <Notice tone="info" title="The cart is empty">
          <p>Tick files in the results (or “Add page to cart”) to collect them here. The cart is kept in this browser.</p>
        </Notice>
      ) : (
        <>
          <p className="cart-summary">
            {plural(cart.items.length, "file")}, {formatBytes(totalBytes)}{" "}
            <button type="button" className="link-button" onClick={cart.clear} disabled={downloads.running}>
              Empty the cart
            </button>
          </p>
          <h3>Download</h3>
          <div className="cart-way">
            <h4>1. A manifest for the command line</h4>
            <button type="button" className="button button-primary" onClick={downloadManifest} disabled={manifest.isPending}>
              {manifest.isPending ? "Preparing manifest…" : "Download manifest"}
            </button>
            {manifest.isError ? <RequestProblem error={manifest.error} what="Making the manifest" onRetry={downloadManifest} /> : null}
            {manifest.isSuccess ? (
              <p className="hint" role="status">
                Saved as {MANIFEST_FILE}.
              </p>
            ) : null}
            <p className="hint">Then, where the manifest was saved, run:</p>
            <div className="command">
              <code id={`${id}-command`}>{fetchCommand()}</code>
              <CopyButton text={fetchCommand()} label="Copy command" />
            </div>
          </div>

          <div className="cart-way">
            <h4>2. Fetch in this browser over NDN</h4>
            <form
              className="forwarder-form"
              onSubmit={(e) => {
                e.preventDefault();
                if (forwarderValid) setForwarder(forwarderText.trim());
              }}
            >
              <label>
                Forwarder WebSocket
                <input
                  value={forwarderText}
                  onChange={(e) => setForwarderText(e.target.value)}
                  onBlur={() => forwarderValid && setForwarder(forwarderText.trim())}
                  aria-invalid={!forwarderValid}
                  spellCheck={false}
                />
              </label>
              {!forwarderValid ? <p className="field-error">Write a ws:// or wss:// address, e.g. ws://127.0.0.1:9696.</p> : null}
            </form>
            {downloads.running ? (
              <button type="button" className="button" onClick={downloads.cancel}>
                Cancel fetch
              </button>
            ) : (
              <button
                type="button"
                className="button button-primary"
                disabled={!forwarderValid}
                onClick={() => void downloads.start(cart.items)}
              >
                Fetch over NDN
              </button>
            )}
            <p className="hint">
              Each file is fetched by name from the nearest copy, checked segment by segment and against the catalog's
              SHA-256, then saved by the browser.
            </p>
          </div>

          {transfer ? (
            <div className="cart-way">
              <h4>3. Transfer to a site</h4>
              {transfer}
            </div>
          ) : null}

          <h3>Files</h3>
          <BatchSummary states={Object.values(downloads.states)} running={downloads.running} />
          <ul className="cart-items" aria-label="Files in the cart">
            {cart.items.map((item) => (
              <CartRow
                key={item.name}
                fileName={item.fileName}
                name={item.name}
                size={item.size}
                state={downloads.states[item.name]}
                onOpen={() => onOpenFile(item.name)}
                onRemove={() => cart.remove([item.name])}
                disabled={downloads.running}
              />
            ))}
          </ul>

        </>
      )}
    </section>
  );
}

interface CartRowProps {
  name: string;
  fileName: string;
  size: number | null;
  state: DownloadState | undefined;
  disabled: boolean;
  onOpen: () => void;
  onRemove: () => void;
}

function CartRow({ name, fileName, size, state, disabled, onOpen, onRemove }: CartRowProps) {
  const total = state?.total ?? size;
  const done = state && ["verified", "unverified"].includes(state.status);
  return (
    <li className={`cart-item ${state ? `dl-${state.status}` : ""}`}>
      <div className="cart-item-head">
        <button type="button" className="link-button" onClick={onOpen} title={name} aria-label={`${fileName}: show metadata`}>
          {fileName}
        </button>
        <span className="muted">{formatBytes(size)}</span>
        <button type="button" className="chip-remove" onClick={onRemove} disabled={disabled} aria-label={`Remove ${fileName} from the cart`}>
          ×
        </button>
      </div>
      {state ? (
        <div className="cart-progress">
          <progress
            max={total ?? undefined}
            value={state.status === "queued" ? 0 : done ? (total ?? state.received) : state.received}
            aria-label={`${fileName} download`}
          />
          {done && state.url ? (
            <a href={state.url} download={fileName} className="button button-small" aria-label={`Save ${fileName}`}>
              Save
            </a>
          ) : null}
          <span className="dl-status">
            {STATUS_TEXT[state.status]}
            {state.status === "fetching" ? ` ${formatBytes(state.received)}${total ? ` of ${formatBytes(total)}` : ""}` : ""}
            {state.message && state.status !== "fetching" ? `: ${state.message}` : ""}
          </span>
        </div>
      ) : null}
    </li>
  );
}

function BatchSummary({ states, running }: { states: DownloadState[]; running: boolean }) {
  if (states.length === 0) return null;
  const count = (...statuses: DownloadState["status"][]) => states.filter((s) => statuses.includes(s.status)).length;
  const done = count("verified", "unverified", "mismatch", "failed", "cancelled");
  const parts = [
    [count("verified"), "verified"],
    [count("unverified"), "not verifiable"],
    [count("mismatch"), "checksum mismatch"],
    [count("failed"), "failed"],
    [count("cancelled"), "cancelled"],
  ]
    .filter(([n]) => n)
    .map(([n, what]) => `${n} ${what}`);
  return (
    <p className="cart-batch" role="status">
      {running ? `Fetching over NDN: ${done} of ${states.length} done` : `NDN fetch finished: ${done} of ${states.length}`}
      {parts.length ? ` (${parts.join(", ")})` : ""}
    </p>
  );
}
