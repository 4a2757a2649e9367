import { HttpResponse } from "msw";
import { describe, expect, it, vi } from "vitest";
import { foreignAnswer, handle, healthy, server } from "@/testing/server";
import { ApiError, api, call } from "./client";
import { routes } from "./routes";

const health = (options?: { timeoutMs?: number }) => call((signal) => api.GET(routes.health.path, { signal }), options);

describe("call", () => {
  it("resolves to the answer's body", async () => {
    await expect(health()).resolves.toEqual(healthy);
  });

  it("turns the catalog's error body into the message", async () => {
    server.use(
      handle("search", () => HttpResponse.json({ detail: "unknown facet 'modle'", valid_facets: ["model"] }, { status: 400 })),
    );
    const error = await call((signal) => api.GET(routes.search.path, { params: { query: { q: "x" } }, signal })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ kind: "http", status: 400, message: "unknown facet 'modle'" });
    expect((error as ApiError).detail?.valid_facets).toEqual(["model"]);
  });

  it("explains a catalog that does not answer", async () => {
    server.use(handle("health", () => HttpResponse.error()));
    await expect(health()).rejects.toMatchObject({ kind: "network", message: expect.stringContaining("ndnsci catalog serve") });
  });

  it("says when the catalog is too slow", async () => {
    server.use(handle("health", () => new Promise<never>(() => {})));
    await expect(health({ timeoutMs: 50 })).rejects.toMatchObject({
      kind: "timeout",
      message: expect.stringMatching(/^The catalog did not answer within \d+ s\.$/),
    });
  });

  it("says a 500 failed without a JSON body", async () => {
    server.use(handle("health", () => foreignAnswer("boom", { status: 502 })));
    await expect(health()).rejects.toMatchObject({ kind: "http", status: 502, message: "The catalog failed (HTTP 502)." });
  });

  it("says when a successful answer is not JSON (a proxy's page)", async () => {
    server.use(handle("health", () => foreignAnswer("<html>", { status: 200 })));
    await expect(health()).rejects.toMatchObject({ kind: "http", message: "The catalog's answer could not be read (it is not JSON)." });
  });

  it("passes the caller's cancellation on as it is", async () => {
    server.use(handle("health", () => new Promise<never>(() => {})));
    const caller = new AbortController();
    const pending = call((signal) => api.GET(routes.health.path, { signal }), { signal: caller.signal });
    caller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ name: "AbortError" });
  });
});

describe("api", () => {
  it("sends a file's NDN name component by component, each encoded once", async () => {
    const seen = vi.fn();
    server.use(
      handle("file", ({ request }) => {
        seen(new URL(request.url).pathname);
        return HttpResponse.json({ detail: "no such file" }, { status: 404 });
      }),
    );
    await call((signal) => api.GET(routes.file.path, { params: { path: { name: "/CMIP5/output1/a b%2Fc.nc" } }, signal })).catch(
      () => {},
    );
    expect(seen).toHaveBeenCalledWith("/api/v1/files/CMIP5/output1/a%20b%252Fc.nc");
  });

  it("writes query strings as URLSearchParams does, lists as repeated keys", async () => {
    const seen = vi.fn();
    server.use(
      handle("search", ({ request }) => {
        seen(new URL(request.url).search);
        return HttpResponse.json({ total: 0, limit: 0, offset: 0, results: [], facets: {} });
      }),
    );
    await call((signal) =>
      api.GET(routes.search.path, { params: { query: { q: "tas max", scheme: ["cmip5", "cmip6"], prefix: undefined, limit: 0 } }, signal }),
    );
    expect(seen).toHaveBeenCalledWith("?q=tas+max&scheme=cmip5&scheme=cmip6&limit=0");
  });
});
