import { screen, within } from "@testing-library/react";
import { HttpResponse } from "msw";
import { describe, expect, it, vi } from "vitest";
import { emptyQuery, parsePortalState } from "@/lib/search-query/query-string";
import { handle, server } from "@/testing/server";
import { renderWithClient } from "@/testing/render";
import { FacetPanel } from "./FacetPanel";

describe("FacetPanel", () => {
  it("shows each facet as a group named after it, values with live counts", async () => {
    renderWithClient(<FacetPanel query={emptyQuery()} onQuery={() => {}} />);
    const model = await screen.findByRole("group", { name: "model" });
    expect(within(model).getByRole("checkbox", { name: "CNRM-CM5, 3 files" })).toBeInTheDocument();
    for (const name of ["institute", "experiment", "variable", "frequency", "realm", "table", "ensemble"]) {
      expect(screen.getByRole("group", { name })).toBeInTheDocument();
    }
    // the button that folds a group is named exactly after the facet too (its ▾ is hidden)
    expect(within(model).getByRole("button", { name: "model" })).toHaveAttribute("aria-expanded", "true");
    // the CMIP5 order: institute before model before experiment
    const groups = screen.getAllByRole("group");
    const position = (name: string) => groups.indexOf(screen.getByRole("group", { name }));
    expect(position("institute")).toBeGreaterThanOrEqual(0);
    expect(position("institute")).toBeLessThan(position("model"));
    expect(position("model")).toBeLessThan(position("experiment"));
  });

  it("asks for counts under the filters, not the page", async () => {
    const seen = vi.fn();
    server.use(
      handle("search", ({ request }) => {
        seen(new URL(request.url).search);
        return HttpResponse.json({ total: 0, limit: 0, offset: 0, results: [], facets: {} });
      }),
    );
    renderWithClient(<FacetPanel query={parsePortalState("?model=A&offset=50&sort=size").query} onQuery={() => {}} />);
    await screen.findByText(/No facets/);
    expect(seen).toHaveBeenCalledWith("?limit=0&facet_limit=500&model=A");
  });

  it("switches a value on (OR within the facet) and keeps chosen values visible", async () => {
    const onQuery = vi.fn();
    const { user } = renderWithClient(
      <FacetPanel query={parsePortalState("?model=Gone").query} onQuery={onQuery} />,
    );
    const model = await screen.findByRole("group", { name: "model" });
    expect(within(model).getByRole("checkbox", { name: "Gone, 0 files" })).toBeChecked();
    await user.click(within(model).getByRole("checkbox", { name: "CNRM-CM5, 3 files" }));
    const next = onQuery.mock.calls[0]![0](parsePortalState("?model=Gone").query);
    expect(next.filters.model.include).toEqual(["Gone", "CNRM-CM5"]);
  });

  it("shows all values on request and filters long lists", async () => {
    const { user } = renderWithClient(<FacetPanel query={emptyQuery()} onQuery={() => {}} />);
    const model = await screen.findByRole("group", { name: "model" });
    expect(within(model).getAllByRole("checkbox")).toHaveLength(8);
    await user.click(within(model).getByRole("button", { name: "Show all 22" }));
    expect(within(model).getAllByRole("checkbox")).toHaveLength(22);
    await user.type(within(model).getByRole("searchbox", { name: "Filter model values" }), "hadgem");
    expect(within(model).getAllByRole("checkbox").map((c) => c.getAttribute("aria-label"))).toEqual([
      "HadGEM2-AO, 1 file",
      "HadGEM2-ES, 1 file",
    ]);
  });

  it("starts many-valued facets folded", async () => {
    const { user } = renderWithClient(<FacetPanel query={emptyQuery()} onQuery={() => {}} />);
    const version = await screen.findByRole("group", { name: "version" });
    expect(within(version).queryByRole("checkbox")).not.toBeInTheDocument();
    await user.click(within(version).getByRole("button", { name: "version" }));
    expect(within(version).getAllByRole("checkbox").length).toBeGreaterThan(0);
  });
});
