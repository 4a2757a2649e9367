import { act, renderHook, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CartItem } from "./types";

const bytes = new TextEncoder().encode("hello");
const HELLO_SHA256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

afterEach(() => {
  vi.doUnmock("./ndn/fetch-over-ndn");
  vi.resetModules();
});

async function withSession(sha256: string) {
  vi.doMock("./ndn/fetch-over-ndn", () => ({
    openSession: async () => ({
      fetchFile: async (_name: string, { onProgress }: { onProgress: (p: unknown) => void }) => {
        onProgress({ received: 5, total: 5, phase: "fetching" });
        return { blob: new Blob([bytes]), sha256, versionedName: "/x/v=1", producerSha256: null };
      },
      close: () => {},
    }),
  }));
  const { useNdnDownloads } = await import("./use-ndn-downloads");
  return renderHook(() => useNdnDownloads("ws://127.0.0.1:9696"));
}

const item = (sha256: string | null): CartItem => ({ name: "/x/hello.txt", fileName: "hello.txt", size: 5, sha256 });

describe("useNdnDownloads", () => {
  it("saves a file whose SHA-256 matches the catalog's", async () => {
    vi.spyOn(URL, "createObjectURL").mockReturnValue("blob:x");
    const click = vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(() => {});
    const { result } = await withSession(HELLO_SHA256);
    await act(() => result.current.start([item(HELLO_SHA256)]));
    await waitFor(() => expect(result.current.states["/x/hello.txt"]?.status).toBe("verified"));
    expect(click).toHaveBeenCalledTimes(1);
    expect(result.current.running).toBe(false);
  });

  it("refuses to save a file whose digest differs", async () => {
    vi.spyOn(URL, "createObjectURL").mockReturnValue("blob:x");
    const click = vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(() => {});
    const { result } = await withSession("00".repeat(32));
    await act(() => result.current.start([item(HELLO_SHA256)]));
    const state = result.current.states["/x/hello.txt"]!;
    expect(state.status).toBe("mismatch");
    expect(state.message).toMatch(/differs from the catalog's/);
    expect(click).not.toHaveBeenCalled();
  });

  it("says when the catalog has no checksum to compare with", async () => {
    vi.spyOn(URL, "createObjectURL").mockReturnValue("blob:x");
    vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(() => {});
    const { result } = await withSession(HELLO_SHA256);
    await act(() => result.current.start([item(null)]));
    expect(result.current.states["/x/hello.txt"]).toMatchObject({ status: "unverified" });
  });
});
