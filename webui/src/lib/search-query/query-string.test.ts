import { describe, expect, it } from "vitest";
import {
  emptyQuery,
  filterParams,
  hasFilters,
  parsePortalState,
  removeExclusion,
  serializePortalState,
  toggleFacetValue,
} from "./query-string";

describe("the URL holds the whole search", () => {
  it("reads facets (OR within one), typed parameters and the open file", () => {
    const { query, file } = parsePortalState(
      "?q=tas&model=HadCM3&model=CanESM2&experiment!=rcp85&prefix=/CMIP5&start=1850&end=2005-12&sort=-size&offset=50&limit=25&_file=/CMIP5/a.nc",
    );
    expect(query.q).toBe("tas");
    expect(query.filters.model).toEqual({ include: ["HadCM3", "CanESM2"], exclude: [] });
    expect(query.filters.experiment).toEqual({ include: [], exclude: ["rcp85"] });
    expect(query).toMatchObject({ prefix: "/CMIP5", start: "1850", end: "2005-12", sort: "-size", offset: 50, limit: 25 });
    expect(file).toBe("/CMIP5/a.nc");
  });

  it("round-trips, leaving defaults out of the URL", () => {
    const text = "q=tas&experiment=historical&model=HadCM3&model=CanESM2&sort=-size&offset=50";
    expect(serializePortalState(parsePortalState(`?${text}`))).toBe(text);
    expect(serializePortalState({ query: emptyQuery(), file: null })).toBe("");
  });

  it("holds the Transfers page and its open job, keeping the search for the way back", () => {
    const state = parsePortalState("?model=HadCM3&_view=transfers&_job=12");
    expect(state).toMatchObject({ view: "transfers", job: 12 });
    expect(state.query.filters).toEqual({ model: { include: ["HadCM3"], exclude: [] } });
    expect(serializePortalState(state)).toBe("model=HadCM3&_view=transfers&_job=12");
    expect(serializePortalState({ ...state, view: "search", job: null })).toBe("model=HadCM3");
    expect(parsePortalState("?_view=transfers&_job=0").job).toBeNull();
    expect(parsePortalState("?_view=transfers&_job=x").job).toBeNull();
    expect(parsePortalState("?_job=3")).toMatchObject({ view: "search", job: null });
  });

  it("ignores what it cannot use instead of failing the page", () => {
    const { query } = parsePortalState("?sort=sideways&offset=-3&limit=abc&model=&_other=1");
    expect(query.sort).toBe("name");
    expect(query.offset).toBe(0);
    expect(query.limit).toBe(50);
    expect(query.filters).toEqual({});
  });

  it("is a valid /search query string for the catalog (manifests reuse it)", () => {
    const { query } = parsePortalState("?model=HadCM3&q=tas&_file=/x/y&sort=size");
    expect(filterParams(query).toString()).toBe("q=tas&model=HadCM3");
  });

  it("toggles facet values and goes back to the first page", () => {
    let query = { ...emptyQuery(), offset: 100 };
    query = toggleFacetValue(query, "model", "A", true);
    query = toggleFacetValue(query, "model", "B", true);
    expect(query.filters.model!.include).toEqual(["A", "B"]);
    expect(query.offset).toBe(0);
    query = toggleFacetValue(query, "model", "A", false);
    query = toggleFacetValue(query, "model", "B", false);
    expect(query.filters).toEqual({});
    expect(hasFilters(query)).toBe(false);
  });

  it("removes an exclusion", () => {
    const { query } = parsePortalState("?model!=A");
    expect(removeExclusion(query, "model", "A").filters).toEqual({});
  });
});
