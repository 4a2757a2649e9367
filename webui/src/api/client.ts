// A thin fetch wrapper: JSON in and out, a time limit, and errors a person can act on.
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

export interface RequestOptions {
  method?: "GET" | "POST";
  body?: unknown;
  signal?: AbortSignal;
  timeoutMs?: number;
  accept?: string;
}

async function send(url: string, options: RequestOptions): Promise<Response> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? REQUEST_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const headers: Record<string, string> = { Accept: options.accept ?? "application/json" };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method ?? "GET",
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error; // the caller cancelled: not ours to explain
    if (timeout.aborted) {
      throw new ApiError(
        "timeout",
        `The catalog did not answer within ${Math.round((options.timeoutMs ?? REQUEST_TIMEOUT_MS) / 1000)} s.`,
      );
    }
    throw new ApiError(
      "network",
      "Cannot reach the catalog. Check that `ndnsci catalog serve` is running and this page's address is right.",
    );
  }
  if (!response.ok) throw await httpError(response);
  return response;
}

async function httpError(response: Response): Promise<ApiError> {
  let detail: ErrorResponse | undefined;
  try {
    const body: unknown = await response.json();
    if (body && typeof body === "object" && "detail" in body) {
      const raw = (body as { detail: unknown }).detail;
      detail = { ...(body as ErrorResponse), detail: typeof raw === "string" ? raw : JSON.stringify(raw) };
    }
  } catch {
    // not JSON (a proxy's error page): the status says enough
  }
  const message =
    detail?.detail ??
    (response.status >= 500
      ? `The catalog failed (HTTP ${response.status}).`
      : `The catalog refused the request (HTTP ${response.status}).`);
  return new ApiError("http", message, response.status, detail);
}

export async function getJson<T>(url: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(url, options);
  return (await response.json()) as T;
}

export async function postForBlob(url: string, body: unknown, options: RequestOptions = {}): Promise<Blob> {
  const response = await send(url, { ...options, method: "POST", body, accept: "*/*" });
  return response.blob();
}

export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}
