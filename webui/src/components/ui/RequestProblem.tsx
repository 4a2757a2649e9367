import { ApiError } from "@/api/client";
import { Notice } from "./Notice";

interface RequestProblemProps {
  error: unknown;
  /** what was being asked, e.g. "Search" */
  what: string;
  onRetry?: () => void;
}

/** Why a request to the catalog failed, in words a user can act on, with a retry. */
export function RequestProblem({ error, what, onRetry }: RequestProblemProps) {
  const api = error instanceof ApiError ? error : undefined;
  const title =
    api?.kind === "network"
      ? `${what} failed: the catalog is not reachable`
      : api?.kind === "timeout"
        ? `${what} failed: the catalog is too slow`
        : api?.status !== undefined && api.status < 500
          ? `${what} was refused`
          : `${what} failed`;
  const message = error instanceof Error ? error.message : String(error);
  const valid = api?.detail?.valid_facets;
  return (
    <Notice
      tone="error"
      title={title}
      action={
        onRetry ? (
          <button type="button" className="button" onClick={onRetry}>
            Try again
          </button>
        ) : null
      }
    >
      <p>{message}</p>
      {valid?.length ? <p>Known facets: {valid.join(", ")}.</p> : null}
    </Notice>
  );
}
