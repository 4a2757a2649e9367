import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { API, server } from "@/testing/server";
import { ApiError, getJson } from "./client";

describe("getJson", () => {
  it("turns the catalog's error body into the message", async () => {
    server.use(
      http.get(`${API}/search`, () =>
        HttpResponse.json({ detail: "unknown facet 'modle'", valid_facets: ["model"] }, { status: 400 }),
      ),
    );
    const error = await getJson("/api/v1/search?modle=x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ kind: "http", status: 400, message: "unknown facet 'modle'" });
    expect((error as ApiError).detail?.valid_facets).toEqual(["model"]);
  });

  it("explains a catalog that does not answer", async () => {
    server.use(http.get(`${API}/health`, () => HttpResponse.error()));
    await expect(getJson("/api/v1/health")).rejects.toMatchObject({
      kind: "network",
      message: expect.stringContaining("ndnsci catalog serve"),
    });
  });

  it("says when the catalog is too slow", async () => {
    server.use(http.get(`${API}/health`, () => new Promise<never>(() => {})));
    await expect(getJson("/api/v1/health", { timeoutMs: 50 })).rejects.toMatchObject({ kind: "timeout" });
  });

  it("says a 500 failed without a JSON body", async () => {
    server.use(http.get(`${API}/health`, () => new HttpResponse("boom", { status: 502 })));
    await expect(getJson("/api/v1/health")).rejects.toMatchObject({ message: "The catalog failed (HTTP 502)." });
  });
});
