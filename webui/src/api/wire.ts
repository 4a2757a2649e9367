// Wire types: what the catalog sends, as generated from its OpenAPI document. UI code maps
// them to the feature's own types (features/*/types.ts) at the edge, in the api/ files.
import type { components, operations } from "./generated/schema";

type Schemas = components["schemas"];

export type SearchResponse = Schemas["SearchResponse"];
export type FileSummary = Schemas["FileSummary"];
export type FileRecord = Schemas["FileRecord"];
export type NameNode = Schemas["Node"];
export type TreeResponse = Schemas["TreeResponse"];
export type AutocompleteResponse = Schemas["AutocompleteResponse"];
export type HealthResponse = Schemas["HealthResponse"];
export type StatsResponse = Schemas["StatsResponse"];
export type ManifestRequest = Schemas["ManifestRequest"];
export type ErrorResponse = Schemas["ErrorResponse"];
export type TransferRequest = Schemas["TransferRequest"];
export type TransferJobResponse = Schemas["TransferJobResponse"];
export type TransferFileEntry = Schemas["TransferFileEntry"];

/** The parameters /search declares (facet filters come on top: see client.ts queryString). */
export type SearchParameters = NonNullable<operations["search"]["parameters"]["query"]>;
export type SortKey = NonNullable<SearchParameters["sort"]>;
