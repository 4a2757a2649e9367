// The catalog's API client: openapi-fetch typed by path with the generated OpenAPI types (a
// call's parameters, body and answer come from its path, no casts), plus a time limit and
// errors a person can act on.
import createClient from "openapi-fetch";
import type { paths } from "./generated/schema";
import { queryString } from "./query-string";
import { encodeName } from "./routes";
import type { ErrorResponse } from "./wire";

export type ApiErrorKind = "network" | "timeout" | "http";

export class ApiError extends Error {
  readonly kind: ApiErrorKind;
  readonly status: number | undefined;
  readonly detail: ErrorResponse | undefined;

  constructor(kind: ApiErrorKind, message: string, status?: number, detail?: ErrorResponse) {
    super(message);
    this.name = "ApiError";
    this.kind = kind;
    this.status = status;
    this.detail = detail;
  }
}

/** Requests slower than this are abandoned with a "timeout" error (the page says so). */
export const REQUEST_TIMEOUT_MS = 20_000;

/** Path parameters: every one of this API is an NDN name, sent component by component. */
function namePath(pathname: string, params: Record<string, unknown>): string {
  return pathname.replace(/\{([^{}]+)\}/g, (_, key: string) => encodeName(String(params[key] ?? "")));
}

export const api = createClient<paths>({
  // absolute, because Request() outside a browser (unit tests) needs it; the page's own origin
  // is the catalog's (it serves the portal; `npm run dev` proxies /api to it)
  baseUrl: globalThis.location?.origin ?? "",
  // looked up per call, so the fetch that msw patches in unit tests is the one used
  fetch: (request) => globalThis.fetch(request),
  headers: { Accept: "application/json" },
  querySerializer: (declared) => queryString(declared),
  pathSerializer: namePath,
});

/** What an `api` call resolves to: the answer's body or error body, and the response. */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export interface CallOptions {
  /** the caller's cancellation (TanStack Query's) */
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * One catalog call: `send` makes it with the signal it is given (the caller's, plus the time
 * limit). Resolves to the answer's body; anything else rejects with an ApiError.
 *
 *   const tree = await call((signal) => api.GET(routes.tree.path, { params: { query: { path } }, signal }));
 */
export async function call<T>(send: (signal: AbortSignal) => Promise<Answer<T>>, options: CallOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let answer: Answer<T>;
  try {
    answer = await send(signal);
  } catch (error) {
    if (options.signal?.aborted) throw error; // the caller cancelled: not ours to explain
    if (timeout.aborted) {
      throw new ApiError("timeout", `The catalog did not answer within ${Math.round(timeoutMs / 1000)} s.`);
    }
    if (error instanceof SyntaxError) {
      throw new ApiError("http", "The catalog's answer could not be read (it is not JSON).");
    }
    throw new ApiError(
      "network",
      "Cannot reach the catalog. Check that `ndnsci catalog serve` is running and this page's address is right.",
    );
  }
  const { data, error, response } = answer;
  if (!response.ok) throw httpError(response.status, error);
  if (data === undefined) throw new ApiError("http", `The catalog's answer was empty (HTTP ${response.status}).`, response.status);
  return data;
}

function httpError(status: number, body: unknown): ApiError {
  const detail = errorDetail(body);
  const message =
    detail?.detail ??
    (status >= 500 ? `The catalog failed (HTTP ${status}).` : `The catalog refused the request (HTTP ${status}).`);
  return new ApiError("http", message, status, detail);
}

/** The catalog's error body; a proxy's may be anything. FastAPI's own `detail` is a list. */
function errorDetail(body: unknown): ErrorResponse | undefined {
  if (typeof body !== "object" || body === null || !("detail" in body)) return undefined;
  const { detail, ...rest } = body;
  return { ...rest, detail: typeof detail === "string" ? detail : JSON.stringify(detail) };
}

export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}
