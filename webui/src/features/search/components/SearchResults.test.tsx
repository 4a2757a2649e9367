import { screen, within } from "@testing-library/react";
import { HttpResponse } from "msw";
import { describe, expect, it, vi } from "vitest";
import { fixtures, handle, server } from "@/testing/server";
import { renderWithClient } from "@/testing/render";
import { emptyQuery, parsePortalState } from "@/lib/search-query/query-string";
import { SearchResults } from "./SearchResults";

const noop = () => {};
const props = { selected: null, onQuery: noop, onOpen: noop, isInCart: () => false, onToggleCart: noop };

describe("SearchResults", () => {
  it("shows file name, NDN name, size and time coverage in a table named Results", async () => {
    renderWithClient(<SearchResults query={emptyQuery()} {...props} />);
    const table = await screen.findByRole("table", { name: "Results" });
    const first = fixtures.searchPage.results[0]!;
    const row = within(table).getByRole("button", { name: `${first.filename}: show metadata` }).closest("tr")!;
    expect(row).toHaveTextContent(first.name);
    expect(row).toHaveTextContent("23.7 KiB");
    expect(row).toHaveTextContent("1450-01-01 – 1450-03-01");
    expect(screen.getByRole("heading", { name: "32 files · 1–3 shown" })).toBeInTheDocument();
  });

  it("shows the original file name, and the canonical one under it when the translator renamed the file", async () => {
    const first = fixtures.searchPage.results[0]!;
    const renamed = {
      ...first,
      name: first.name.replace(/[^/]+$/, "tas_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011-clim.nc"),
      filename: "tas_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011-clim.nc",
      original: "tas_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011_clim.nc",
    };
    server.use(handle("search", () => HttpResponse.json({ ...fixtures.searchPage, results: [renamed, first] })));
    renderWithClient(<SearchResults query={emptyQuery()} {...props} />);
    const table = await screen.findByRole("table", { name: "Results" });
    expect(within(table).getByRole("columnheader", { name: "Original file name" })).toBeInTheDocument();
    const button = within(table).getByRole("button", { name: `${renamed.original}: show metadata` });
    const cell = button.closest("td")!;
    expect(button).toHaveTextContent(renamed.original);
    expect(cell).toHaveTextContent(`published as → ${renamed.filename}`);
    // a file whose name needed no correction shows it once
    const plain = within(table).getByRole("button", { name: `${first.filename}: show metadata` }).closest("td")!;
    expect(plain).toHaveTextContent(new RegExp(`^${first.filename}$`));
  });

  it("adds a Site column in a federation, with the site that published each file", async () => {
    const [first, second] = fixtures.searchPage.results;
    server.use(
      handle("search", () =>
        HttpResponse.json({ ...fixtures.searchPage, results: [{ ...first!, site: "kisti" }, { ...second!, site: "csu" }] }),
      ),
    );
    renderWithClient(<SearchResults query={emptyQuery()} {...props} />);
    const table = await screen.findByRole("table", { name: "Results" });
    expect(within(table).getByRole("columnheader", { name: "Site" })).toBeInTheDocument();
    const rowOf = (file: typeof first) =>
      within(table).getByRole("button", { name: `${file!.filename}: show metadata` }).closest("tr")!;
    expect(rowOf(first).querySelector(".col-site")).toHaveTextContent(/^kisti$/);
    expect(rowOf(second).querySelector(".col-site")).toHaveTextContent(/^csu$/);
  });

  it("has no Site column in a catalog without sites", async () => {
    renderWithClient(<SearchResults query={emptyQuery()} {...props} />);
    const table = await screen.findByRole("table", { name: "Results" });
    await within(table).findByRole("columnheader", { name: "NDN name" });
    expect(within(table).queryByRole("columnheader", { name: "Site" })).not.toBeInTheDocument();
  });

  it("asks the catalog for the query in the URL, without facet counts", async () => {
    const seen = vi.fn();
    server.use(
      handle("search", ({ request }) => {
        seen(new URL(request.url).search);
        return HttpResponse.json(fixtures.searchPage);
      }),
    );
    const { query } = parsePortalState("?model=HadCM3&model=CanESM2&sort=-size&offset=50");
    renderWithClient(<SearchResults query={query} {...props} />);
    await screen.findByRole("table", { name: "Results" });
    expect(seen).toHaveBeenCalledWith("?sort=-size&offset=50&limit=50&facets=&model=HadCM3&model=CanESM2");
  });

  it("opens a row's metadata and sorts by a column", async () => {
    const onOpen = vi.fn();
    const onQuery = vi.fn();
    const { user } = renderWithClient(<SearchResults query={emptyQuery()} {...props} onOpen={onOpen} onQuery={onQuery} />);
    const table = await screen.findByRole("table", { name: "Results" });
    await user.click(within(table).getAllByRole("row")[1]!);
    expect(onOpen).toHaveBeenCalledWith(expect.objectContaining({ name: fixtures.searchPage.results[0]!.name }));
    expect(within(table).getByRole("columnheader", { name: "NDN name" })).toHaveAttribute("aria-sort", "ascending");
    await user.click(within(table).getByRole("button", { name: "Size" }));
    expect(onQuery.mock.calls[0]![0](emptyQuery())).toMatchObject({ sort: "size", offset: 0 });
  });

  it("explains an empty result and offers the filters to remove", async () => {
    server.use(handle("search", () => HttpResponse.json({ total: 0, limit: 50, offset: 0, results: [], facets: {} })));
    const { query } = parsePortalState("?model=Nope");
    renderWithClient(<SearchResults query={query} {...props} emptyHelp={<p>remove model: Nope</p>} />);
    expect(await screen.findByText("No files match this search")).toBeInTheDocument();
    expect(screen.getByText("remove model: Nope")).toBeInTheDocument();
    expect(screen.queryByRole("table")).not.toBeInTheDocument();
  });

  it("says the catalog is empty when nothing is published", async () => {
    server.use(handle("search", () => HttpResponse.json({ total: 0, limit: 50, offset: 0, results: [], facets: {} })));
    renderWithClient(<SearchResults query={emptyQuery()} {...props} />);
    expect(await screen.findByText("The catalog is empty")).toBeInTheDocument();
  });

  it("explains a refused search and retries on request", async () => {
    let calls = 0;
    server.use(
      handle("search", () => {
        calls += 1;
        return calls === 1
          ? HttpResponse.json({ detail: "start='abc' is not a date such as 1850" }, { status: 400 })
          : HttpResponse.json(fixtures.searchPage);
      }),
    );
    const { user } = renderWithClient(<SearchResults query={emptyQuery()} {...props} />);
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Search was refused");
    expect(alert).toHaveTextContent("start='abc' is not a date");
    await user.click(within(alert).getByRole("button", { name: "Try again" }));
    expect(await screen.findByRole("table", { name: "Results" })).toBeInTheDocument();
  });

  it("explains an unreachable catalog", async () => {
    server.use(handle("search", () => HttpResponse.error()));
    renderWithClient(<SearchResults query={emptyQuery()} {...props} />);
    expect(await screen.findByRole("alert")).toHaveTextContent("the catalog is not reachable");
  });

  it("says so while a search is slow", async () => {
    server.use(handle("search", () => new Promise<never>(() => {})));
    renderWithClient(<SearchResults query={emptyQuery()} {...props} />);
    expect(await screen.findByText(/Still waiting for the catalog/, {}, { timeout: 3000 })).toBeInTheDocument();
  });
});
