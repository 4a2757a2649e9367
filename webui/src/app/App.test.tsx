import { screen, waitFor, within } from "@testing-library/react";
import { HttpResponse } from "msw";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { fixtures, handle, server } from "@/testing/server";
import { renderWithClient } from "@/testing/render";
import { App } from "./App";

beforeEach(() => {
  vi.stubGlobal(
    "WebSocket",
    class {
      onerror: (() => void) | null = null;
      constructor() {
        setTimeout(() => this.onerror?.(), 1);
      }
      close() {}
    },
  );
  return () => vi.unstubAllGlobals();
});

describe("App", () => {
  it("restores the search from the URL and writes changes back to it", async () => {
    window.history.replaceState(null, "", "/?model=CNRM-CM5&sort=-size");
    const seen: string[] = [];
    server.use(
      handle("search", ({ request }) => {
        const url = new URL(request.url);
        seen.push(url.search);
        return HttpResponse.json(url.searchParams.get("limit") === "0" ? fixtures.facets : fixtures.searchPage);
      }),
    );
    const { user } = renderWithClient(<App />);
    const model = await screen.findByRole("group", { name: "model" });
    expect(within(model).getByRole("checkbox", { name: "CNRM-CM5, 3 files" })).toBeChecked();
    expect(screen.getByRole("combobox", { name: "Sort by" })).toHaveValue("-size");
    expect(seen).toContain("?sort=-size&offset=0&limit=50&facets=&model=CNRM-CM5");

    await user.click(within(screen.getByRole("group", { name: "experiment" })).getByRole("checkbox", { name: "historical, 10 files" }));
    expect(window.location.search).toBe("?experiment=historical&model=CNRM-CM5&sort=-size");
    await user.click(screen.getByRole("button", { name: "Remove filter model: CNRM-CM5" }));
    expect(window.location.search).toBe("?experiment=historical&sort=-size");
  });

  it("types a search into the URL and opens a result's metadata", async () => {
    const { user } = renderWithClient(<App />);
    await user.type(screen.getByRole("searchbox", { name: "Search" }), "fgco2{Enter}");
    await waitFor(() => expect(window.location.search).toBe("?q=fgco2"));
    const table = await screen.findByRole("table", { name: "Results" });
    await user.click(within(table).getAllByRole("button", { name: /^.+: show metadata$/ })[0]!);
    expect(new URLSearchParams(window.location.search).get("_file")).toBe(fixtures.searchPage.results[0]!.name);
    expect(await screen.findByRole("region", { name: "Metadata" })).toBeInTheDocument();
  });

  it("keeps the cart in localStorage", async () => {
    const { user } = renderWithClient(<App />);
    const table = await screen.findByRole("table", { name: "Results" });
    const first = fixtures.searchPage.results[0]!;
    await user.click(within(table).getByRole("checkbox", { name: `Add ${first.filename} to the cart` }));
    expect(JSON.parse(window.localStorage.getItem("ndnsci.cart.v1")!)).toEqual([
      { name: first.name, fileName: first.filename, size: first.size, sha256: first.sha256 },
    ]);
    await user.click(screen.getByRole("button", { name: "Cart, 1 file" }));
    expect(within(screen.getByRole("region", { name: "Cart" })).getByText(first.filename)).toBeInTheDocument();
  });

  it("goes to the Transfers page and back, keeping the search in the URL", async () => {
    vi.stubGlobal("EventSource", class extends EventTarget { close() {} });
    window.history.replaceState(null, "", "/?model=CNRM-CM5");
    const { user } = renderWithClient(<App />);
    const pages = screen.getByRole("navigation", { name: "Pages" });
    expect(within(pages).getByRole("link", { name: "Search" })).toHaveAttribute("aria-current", "page");
    await user.click(within(pages).getByRole("link", { name: "Transfers" }));
    expect(window.location.search).toBe("?model=CNRM-CM5&_view=transfers");
    expect(await screen.findByRole("heading", { name: "Transfers", level: 2 })).toBeInTheDocument();
    expect(within(pages).getByRole("link", { name: "Transfers" })).toHaveAttribute("aria-current", "page");
    await user.click(await screen.findByRole("button", { name: "Job 7" }));
    expect(window.location.search).toBe("?model=CNRM-CM5&_view=transfers&_job=7");
    expect(await screen.findByRole("heading", { name: "Transfer job 7" })).toBeInTheDocument();
    await user.click(within(pages).getByRole("link", { name: "Search" }));
    expect(window.location.search).toBe("?model=CNRM-CM5");
    expect(await screen.findByRole("table", { name: "Results" })).toBeInTheDocument();
  });

  it("offers the cart's files and a search's results to a transfer", async () => {
    const { user } = renderWithClient(<App />);
    const table = await screen.findByRole("table", { name: "Results" });
    const first = fixtures.searchPage.results[0]!;
    await user.click(within(table).getByRole("checkbox", { name: `Add ${first.filename} to the cart` }));
    await user.click(screen.getByRole("button", { name: "Cart, 1 file" }));
    const cart = screen.getByRole("region", { name: "Cart" });
    expect(within(cart).getByRole("form", { name: "Transfer to a site" })).toBeInTheDocument();
    const launch = screen.getByRole("button", { name: `Transfer all ${fixtures.searchPage.total} to a site` });
    expect(launch).toHaveAttribute("aria-expanded", "false");
    await user.click(launch);
    expect(launch).toHaveAttribute("aria-expanded", "true");
    expect(screen.getAllByRole("form", { name: "Transfer to a site" })).toHaveLength(2);
  });
});
