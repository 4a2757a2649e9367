/** A file in the cart: enough to write a manifest and check a download without asking again. */
export interface CartItem {
  name: string;
  fileName: string;
  size: number | null;
  sha256: string | null;
}

export type DownloadStatus =
  | "queued"
  | "connecting"
  | "discovering"
  | "fetching"
  | "verified"
  | "unverified"
  | "mismatch"
  | "failed"
  | "cancelled";

export interface DownloadState {
  name: string;
  status: DownloadStatus;
  received: number;
  total: number | null;
  message: string | null;
  sha256: string | null;
  /** object URL of the fetched bytes, kept for "Save again" */
  url: string | null;
}
