import { act, screen, within } from "@testing-library/react";
import { HttpResponse } from "msw";
import { describe, expect, it, vi } from "vitest";
import { writeStored } from "@/lib/local-store";
import { handle, server } from "@/testing/server";
import { renderWithClient } from "@/testing/render";
import { CART_KEY } from "../cart";
import { CartPanel } from "./CartPanel";

const ITEMS = [
  { name: "/CMIP5/a/tas_1.nc", fileName: "tas_1.nc", size: 2048, sha256: "ab".repeat(32) },
  { name: "/CMIP5/a/tas_2.nc", fileName: "tas_2.nc", size: 1024, sha256: null },
];

describe("CartPanel", () => {
  it("lists the stored cart, then removes and empties", async () => {
    window.localStorage.setItem(CART_KEY, JSON.stringify(ITEMS));
    const { user } = renderWithClient(<CartPanel onClose={() => {}} onOpenFile={() => {}} />);
    const cart = screen.getByRole("region", { name: "Cart" });
    expect(within(cart).getByText("2 files, 3.00 KiB")).toBeInTheDocument();
    await user.click(within(cart).getByRole("button", { name: "Remove tas_1.nc from the cart" }));
    expect(JSON.parse(window.localStorage.getItem(CART_KEY)!)).toHaveLength(1);
    await user.click(within(cart).getByRole("button", { name: "Empty the cart" }));
    expect(window.localStorage.getItem(CART_KEY)).toBeNull();
    expect(within(cart).getByText("The cart is empty")).toBeInTheDocument();
  });

  it("downloads a manifest of the cart's names and shows the fetch command", async () => {
    window.localStorage.setItem(CART_KEY, JSON.stringify(ITEMS));
    const posted = vi.fn();
    server.use(
      handle("manifests", async ({ request }) => {
        posted(await request.json());
        return new HttpResponse("{}\n", { headers: { "Content-Type": "application/x-ndjson" } });
      }),
    );
    const created = vi.spyOn(URL, "createObjectURL").mockReturnValue("blob:manifest");
    vi.spyOn(URL, "revokeObjectURL").mockImplementation(() => {});
    const clicked = vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
      expect(this.download).toBe("ndnsci-manifest.jsonl");
    });
    const { user } = renderWithClient(<CartPanel onClose={() => {}} onOpenFile={() => {}} />);
    await user.click(screen.getByRole("button", { name: "Download manifest" }));
    expect(await screen.findByText("Saved as ndnsci-manifest.jsonl.")).toBeInTheDocument();
    expect(posted).toHaveBeenCalledWith({ names: ITEMS.map((i) => i.name) });
    expect(created).toHaveBeenCalled();
    expect(clicked).toHaveBeenCalled();
    expect(screen.getByText("ndnsci fetch --manifest ndnsci-manifest.jsonl")).toBeInTheDocument();
  });

  it("explains a manifest the catalog refused", async () => {
    window.localStorage.setItem(CART_KEY, JSON.stringify(ITEMS));
    server.use(handle("manifests", () => HttpResponse.json({ detail: "give exactly one" }, { status: 422 })));
    const { user } = renderWithClient(<CartPanel onClose={() => {}} onOpenFile={() => {}} />);
    await user.click(screen.getByRole("button", { name: "Download manifest" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("give exactly one");
  });

  it("follows changes made elsewhere (another tab, the results table)", async () => {
    renderWithClient(<CartPanel onClose={() => {}} onOpenFile={() => {}} />);
    expect(screen.getByText("The cart is empty")).toBeInTheDocument();
    act(() => writeStored(CART_KEY, JSON.stringify(ITEMS.slice(0, 1))));
    expect(await screen.findByText("1 file, 2.00 KiB")).toBeInTheDocument();
  });

  it("checks the forwarder address before fetching", async () => {
    window.localStorage.setItem(CART_KEY, JSON.stringify(ITEMS));
    const { user } = renderWithClient(<CartPanel onClose={() => {}} onOpenFile={() => {}} />);
    const input = screen.getByRole("textbox", { name: "Forwarder WebSocket" });
    expect(input).toHaveValue("ws://127.0.0.1:9696");
    await user.clear(input);
    await user.type(input, "http://nope");
    expect(screen.getByText(/Write a ws:\/\/ or wss:\/\/ address/)).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Fetch over NDN" })).toBeDisabled();
  });

  it("reports a forwarder that cannot be reached, per file", async () => {
    window.localStorage.setItem(CART_KEY, JSON.stringify(ITEMS));
    vi.doMock("../ndn/fetch-over-ndn", () => ({
      openSession: () => Promise.reject(new Error("cannot connect to the forwarder at ws://127.0.0.1:9696")),
    }));
    const { user } = renderWithClient(<CartPanel onClose={() => {}} onOpenFile={() => {}} />);
    await user.click(screen.getByRole("button", { name: "Fetch over NDN" }));
    const statuses = await screen.findAllByText(/failed: cannot connect to the forwarder/);
    expect(statuses).toHaveLength(2);
    vi.doUnmock("../ndn/fetch-over-ndn");
  });
});
