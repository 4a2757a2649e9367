// The catalog API as unit tests see it: msw answers fetch() at the network layer with real
// responses captured from a catalog loaded with tests/data/netcdf/cmip5 (fixtures/*.json).
import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import autocompleteM from "./fixtures/autocomplete-M.json";
import facets from "./fixtures/facets.json";
import fileBnu from "./fixtures/file-bnu.json";
import searchPage from "./fixtures/search-page.json";
import stats from "./fixtures/stats.json";
import treeCmip5 from "./fixtures/tree-cmip5.json";
import treeRoot from "./fixtures/tree-root.json";

export const API = "http://localhost:3000/api/v1";
export const fixtures = { autocompleteM, facets, fileBnu, searchPage, stats, treeCmip5, treeRoot };

export const handlers = [
  http.get(`${API}/search`, ({ request }) => {
    const url = new URL(request.url);
    return HttpResponse.json(url.searchParams.get("limit") === "0" ? facets : searchPage);
  }),
  http.get(`${API}/tree`, ({ request }) => {
    const path = new URL(request.url).searchParams.get("path");
    return HttpResponse.json(path === "/CMIP5" ? treeCmip5 : treeRoot);
  }),
  http.get(`${API}/autocomplete`, () => HttpResponse.json(autocompleteM)),
  http.get(`${API}/files/*`, () => HttpResponse.json(fileBnu)),
  http.get(`${API}/health`, () => HttpResponse.json({ status: "ok", database: "sqlite" })),
  http.get(`${API}/stats`, () => HttpResponse.json(stats)),
  http.post(`${API}/manifests`, () =>
    new HttpResponse('{"name": "/CMIP5/a.nc"}\n', { headers: { "Content-Type": "application/x-ndjson" } }),
  ),
];

export const server = setupServer(...handlers);
