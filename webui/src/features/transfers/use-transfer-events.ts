// A job's status, live: the catalog's server-sent events (GET /transfers/{id}/events, one
// `event: job` with the job each time it changes) put into the query cache, so every view of
// the job follows them; its files are asked again as it changes (at most once a second).
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { routes } from "@/api/routes";
import { transferKeys } from "./api/transfers";
import { isActive, type TransferJob } from "./types";

/** connecting / live: the stream is open; reconnecting: it broke, the browser tries again;
 * ended: the job finished (or is not running: nothing to follow); failed: the catalog refused
 * the stream; unsupported: no EventSource here (the view asks every few seconds instead). */
export type LiveState = "connecting" | "live" | "reconnecting" | "ended" | "failed" | "unsupported";

/** The least time between two refreshes of the job's files. */
export const FILES_REFRESH_MS = 1000;

export function transferEventsUrl(id: number): string {
  return routes.transferEvents.path.replace("{job_id}", String(id));
}

export function useTransferEvents(id: number, active: boolean): LiveState {
  const client = useQueryClient();
  const [state, setState] = useState<LiveState>(active ? "connecting" : "ended");

  useEffect(() => {
    if (!active) {
      setState("ended");
      return;
    }
    if (typeof EventSource === "undefined") {
      setState("unsupported");
      return;
    }
    setState("connecting");
    const source = new EventSource(transferEventsUrl(id));
    let last = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const refreshFiles = () => {
      timer = undefined;
      last = Date.now();
      void client.invalidateQueries({ queryKey: [...transferKeys.all, "files", id] });
    };
    source.addEventListener("job", (event) => {
      let job: TransferJob;
      try {
        job = JSON.parse((event as MessageEvent<string>).data) as TransferJob;
      } catch {
        return; // not the catalog's: the next event says it again
      }
      client.setQueryData(transferKeys.job(id), job);
      if (!isActive(job)) {
        source.close(); // the catalog ends the stream; the browser would open it again
        if (timer !== undefined) clearTimeout(timer);
        refreshFiles();
        void client.invalidateQueries({ queryKey: transferKeys.list() });
        setState("ended");
        return;
      }
      setState("live");
      const wait = last + FILES_REFRESH_MS - Date.now();
      if (wait <= 0) refreshFiles();
      else if (timer === undefined) timer = setTimeout(refreshFiles, wait);
    });
    source.addEventListener("open", () => setState((s) => (s === "ended" ? s : "live")));
    source.addEventListener("error", () => {
      setState(source.readyState === EventSource.CLOSED ? "failed" : "reconnecting");
    });
    return () => {
      source.close();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [id, active, client]);

  return state;
}
