// A transfer job and its files as the Transfers page shows them (the catalog's own fields: a
// job is a report, and its words are the API's, so the CLI, the SDK and the page agree).
import type { TransferFileEntry, TransferJobResponse } from "@/api/wire";

export type TransferJob = TransferJobResponse;
export type TransferFile = TransferFileEntry;

/** What a job copies: names (the cart) or a /search query string (a search's results). */
export type TransferSelection = { names: string[] } | { search: string };

export const ENGINES = [
  { value: "auto", label: "auto (NDN-DPDK where it reaches the name, else ndnsci's own)" },
  { value: "python", label: "ndnsci's own (python)" },
  { value: "ndn-dpdk", label: "NDN-DPDK fetcher" },
] as const;

export const FILE_STATES = ["pending", "running", "done", "failed", "cancelled"] as const;
export type FileState = (typeof FILE_STATES)[number];

/** A job the agent may still change (the event stream runs until it ends). */
export function isActive(job: Pick<TransferJob, "state">): boolean {
  return job.state === "queued" || job.state === "running";
}
