import { useCallback, useEffect, useRef, useState } from "react";
import type { CartItem, DownloadState } from "./types";

function initial(item: CartItem): DownloadState {
  return { name: item.name, status: "queued", received: 0, total: item.size, message: null, sha256: null, url: null };
}

function clickDownload(url: string, fileName: string): void {
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
}

/** Fetch cart files over NDN one after another, verify each against the catalog's SHA-256,
 * and save the verified ones. */
export function useNdnDownloads(forwarderUrl: string) {
  const [states, setStates] = useState<Record<string, DownloadState>>({});
  const [running, setRunning] = useState(false);
  const controller = useRef<AbortController | null>(null);
  const urls = useRef<string[]>([]);

  useEffect(
    () => () => {
      controller.current?.abort();
      urls.current.forEach((u) => URL.revokeObjectURL(u));
    },
    [],
  );

  const patch = (name: string, change: Partial<DownloadState>) =>
    setStates((s) => ({ ...s, [name]: { ...s[name]!, ...change } }));

  const start = useCallback(
    async (items: CartItem[], { save = true } = {}) => {
      controller.current?.abort();
      const abort = new AbortController();
      controller.current = abort;
      setStates(Object.fromEntries(items.map((i) => [i.name, initial(i)])));
      setRunning(true);
      let session: Awaited<ReturnType<typeof import("./ndn/fetch-over-ndn").openSession>> | undefined;
      try {
        if (items[0]) patch(items[0].name, { status: "connecting" });
        const ndn = await import("./ndn/fetch-over-ndn");
        try {
          session = await ndn.openSession(forwarderUrl);
        } catch (error) {
          const message = (error as Error).message;
          setStates((s) =>
            Object.fromEntries(Object.entries(s).map(([k, v]) => [k, { ...v, status: "failed", message }])),
          );
          return;
        }
        for (const item of items) {
          if (abort.signal.aborted) {
            patch(item.name, { status: "cancelled", message: "cancelled" });
            continue;
          }
          try {
            const file = await session.fetchFile(item.name, {
              signal: abort.signal,
              size: item.size,
              onProgress: (p) =>
                patch(item.name, { status: p.phase, received: p.received, total: p.total ?? item.size }),
            });
            const url = URL.createObjectURL(file.blob);
            urls.current.push(url);
            if (item.sha256 && file.sha256 !== item.sha256) {
              patch(item.name, {
                status: "mismatch",
                sha256: file.sha256,
                url,
                message: `SHA-256 ${file.sha256.slice(0, 16)}… differs from the catalog's ${item.sha256.slice(0, 16)}…: the file changed since it was published, or was damaged. Not saved.`,
              });
              continue;
            }
            const verified = Boolean(item.sha256);
            patch(item.name, {
              status: verified ? "verified" : "unverified",
              sha256: file.sha256,
              url,
              received: file.blob.size,
              message: verified
                ? "SHA-256 matches the catalog"
                : "the catalog has no SHA-256 for this file: only the segment digests were checked",
            });
            if (save) clickDownload(url, item.fileName);
          } catch (error) {
            const cancelled = abort.signal.aborted;
            patch(item.name, {
              status: cancelled ? "cancelled" : "failed",
              message: cancelled ? "cancelled" : (error as Error).message,
            });
          }
        }
      } finally {
        session?.close();
        if (controller.current === abort) setRunning(false);
      }
    },
    [forwarderUrl],
  );

  const cancel = useCallback(() => controller.current?.abort(), []);
  return { states, running, start, cancel };
}
