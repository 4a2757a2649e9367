// The catalog API as unit tests see it: msw answers fetch() at the network layer with real
// responses captured from a catalog loaded with tests/data/netcdf/cmip5 (fixtures/*.json).
// The handlers are built from the route table (src/api/routes.ts): one default answer per
// route, typed by the route's answer in the OpenAPI document, so a route added to the table
// without an answer, or a fixture that no longer matches the schema, fails the type check.
import { type DefaultBodyType, http, HttpResponse, type HttpResponseResolver, type PathParams } from "msw";
import { setupServer } from "msw/node";
import type { paths } from "@/api/generated/schema";
import { type RouteName, routes } from "@/api/routes";
import type { ErrorResponse } from "@/api/wire";
import autocompleteM from "./fixtures/autocomplete-M.json";
import facets from "./fixtures/facets.json";
import fileBnu from "./fixtures/file-bnu.json";
import searchPage from "./fixtures/search-page.json";
import stats from "./fixtures/stats.json";
import transferFiles from "./fixtures/transfer-files.json";
import transferJob from "./fixtures/transfer-job.json";
import treeCmip5 from "./fixtures/tree-cmip5.json";
import treeRoot from "./fixtures/tree-root.json";

/** The page's origin in the unit tests (vite.config.ts, test.environmentOptions). */
export const ORIGIN = "http://localhost:3000";
/** ``GET /health`` of an idle catalog */
export const healthy = {
  status: "ok",
  database: "sqlite",
  instance: "0123456789abcdef",
  load: { reads: { turns: 4, running: 0, waiting: 0, refused: 0 }, writes: { turns: 2, running: 0, waiting: 0, refused: 0 } },
};
export const fixtures = { autocompleteM, facets, fileBnu, searchPage, stats, transferFiles, transferJob, treeCmip5, treeRoot };

type Operation<N extends RouteName> = paths[(typeof routes)[N]["path"]][(typeof routes)[N]["method"]];
/** What a route answers on success (its 200 or 201 content), by the OpenAPI document. */
type Ok<N extends RouteName> = Operation<N> extends { responses: { 200: { content: infer C } } }
  ? C[keyof C]
  : Operation<N> extends { responses: { 201: { content: infer C } } }
    ? C[keyof C]
    : never;
export type Resolver<N extends RouteName> = HttpResponseResolver<PathParams, DefaultBodyType, Ok<N> | ErrorResponse>;

/** The msw handler of one route of the table (an NDN name, `{name}`, spans segments; any other
 * path parameter is one segment, so /transfers/7/files is not /transfers/7). */
export function handle<N extends RouteName>(name: N, resolver: Resolver<N>) {
  const { method, path } = routes[name];
  const pattern = path.replace(/\{([^{}]+)\}/g, (_, key: string) => (key === "name" ? "*" : `:${key}`));
  return http[method](`${ORIGIN}${pattern}`, resolver);
}

/** An answer the catalog never gives (a proxy's error page): outside the schema on purpose. */
export function foreignAnswer(body: string, init: ResponseInit): HttpResponse<never> {
  return new HttpResponse<string>(body, init) as HttpResponse<never>;
}

const answers: { [N in RouteName]: Resolver<N> } = {
  search: ({ request }) => HttpResponse.json(new URL(request.url).searchParams.get("limit") === "0" ? facets : searchPage),
  tree: ({ request }) => HttpResponse.json(new URL(request.url).searchParams.get("path") === "/CMIP5" ? treeCmip5 : treeRoot),
  autocomplete: () => HttpResponse.json(autocompleteM),
  file: () => HttpResponse.json(fileBnu),
  health: () => HttpResponse.json(healthy),
  stats: () => HttpResponse.json(stats),
  manifests: () =>
    new HttpResponse('{"name": "/CMIP5/a.nc"}\n', { headers: { "Content-Type": "application/x-ndjson" } }),
  transfers: () => HttpResponse.json({ jobs: [transferJob] }),
  submitTransfer: () => HttpResponse.json({ ...transferJob, state: "queued" }, { status: 201 }),
  transfer: () => HttpResponse.json(transferJob),
  transferFiles: () => HttpResponse.json(transferFiles),
  cancelTransfer: () => HttpResponse.json({ ...transferJob, state: "cancelled" }),
  retryTransfer: () => HttpResponse.json({ ...transferJob, state: "queued" }),
  transferEvents: () =>
    new HttpResponse(`event: job\ndata: ${JSON.stringify(transferJob)}\n\n`, { headers: { "Content-Type": "text/event-stream" } }),
};

/** The gateway's quick look of any file (outside the OpenAPI document, as /data/ is): one
 * variable of three time steps, and a 1x1 PNG for every image. */
export const quicklookInfo = {
  default: "fgco2",
  variables: [
    { name: "fgco2", title: "Surface Downward CO2 Flux", units: "kg m-2 s-1", times: 3, levels: 1,
      time_labels: ["1450-01-16", "1450-02-15", "1450-03-16"], level_labels: [] },
    { name: "area", title: "cell area", units: "m2", times: 1, levels: 1, time_labels: [], level_labels: [] },
  ],
};
const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0),
);
export const quicklookHandlers = [
  http.get(`${ORIGIN}/api/v1/quicklook/*/info.json`, () => HttpResponse.json(quicklookInfo)),
  http.get(`${ORIGIN}/api/v1/quicklook/*`, () => new HttpResponse(PNG, { headers: { "Content-Type": "image/png" } })),
];

export const handlers = [...(Object.keys(routes) as RouteName[]).map((name) => handle(name, answers[name])), ...quicklookHandlers];

export const server = setupServer(...handlers);
