// GET /files/{name}: the full record of one file. The extractor's metadata layout may grow, so
// it is read defensively into the panel's own types.
import { useQuery } from "@tanstack/react-query";
import { api, call } from "@/api/client";
import { routes } from "@/api/routes";
import type { FileRecord } from "@/api/wire";
import type { DimensionInfo, FileDetails, SpatialInfo, TimeInfo, VariableInfo } from "../types";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export function attributeText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

function timeInfo(value: unknown): TimeInfo | null {
  if (!isObject(value)) return null;
  return {
    start: str(value.start),
    end: str(value.end),
    first: str(value.first),
    last: str(value.last),
    calendar: str(value.calendar),
    units: str(value.units),
    steps: num(value.length),
  };
}

function spatialInfo(value: unknown): SpatialInfo | null {
  if (!isObject(value)) return null;
  const south = num(value.lat_min);
  const north = num(value.lat_max);
  const west = num(value.west) ?? num(value.lon_min);
  const east = num(value.east) ?? num(value.lon_max);
  if (south === null || north === null || west === null || east === null) return null;
  return { south, north, west, east };
}

function variable(value: unknown): VariableInfo | null {
  if (!isObject(value) || typeof value.name !== "string") return null;
  const attributes = isObject(value.attributes) ? value.attributes : {};
  return {
    name: value.name,
    units: str(value.units) ?? str(attributes.units),
    longName: str(value.long_name) ?? str(attributes.long_name),
    standardName: str(value.standard_name) ?? str(attributes.standard_name),
    dtype: str(value.dtype),
    dimensions: list(value.dimensions).filter((d): d is string => typeof d === "string"),
    shape: list(value.shape).filter((d): d is number => typeof d === "number"),
  };
}

function dimension(value: unknown): DimensionInfo | null {
  if (!isObject(value) || typeof value.name !== "string") return null;
  return { name: value.name, size: num(value.size), unlimited: value.unlimited === true };
}

export function toFileDetails(record: FileRecord): FileDetails {
  const meta: Json = isObject(record.metadata) ? record.metadata : {};
  const attributes = isObject(meta.global_attributes) ? meta.global_attributes : {};
  const fileName = record.filename ?? record.name.slice(record.name.lastIndexOf("/") + 1);
  return {
    name: record.name,
    fileName,
    original: record.original || fileName,
    originalPath: record.original_path ?? null,
    scheme: record.scheme,
    size: record.size ?? null,
    sha256: record.sha256 ?? null,
    version: record.version ?? null,
    publishedAt: record.published_at,
    site: record.site ?? null,
    xrootdUrl: record.urls?.xrootd ?? null,
    format: str(meta.format),
    facets: Object.entries(record.facets).filter((e): e is [string, string] => typeof e[1] === "string"),
    corrections: record.corrections.map((c) => ({ rule: c.rule ?? "", message: c.message ?? "" })),
    time: timeInfo(meta.time) ?? (record.time_start || record.time_end
      ? { start: record.time_start ?? null, end: record.time_end ?? null, first: null, last: null, calendar: null, units: null, steps: null }
      : null),
    spatial: spatialInfo(meta.spatial),
    dimensions: list(meta.dimensions).map(dimension).filter((d): d is DimensionInfo => d !== null),
    variables: list(meta.variables).map(variable).filter((v): v is VariableInfo => v !== null),
    globalAttributes: Object.entries(attributes).map(([k, v]) => [k, attributeText(v)]),
    warnings: list(meta.warnings).map(attributeText),
    history: record.history.map((h) => ({
      version: h.version ?? null,
      seq: h.seq,
      replacedAt: h.replaced_at,
      size: h.size ?? null,
      sha256: h.sha256 ?? null,
    })),
    nameOnly: record.metadata === null || record.metadata === undefined,
  };
}

export async function getFile(name: string, signal?: AbortSignal): Promise<FileDetails> {
  const record = await call(
    (signal) => api.GET(routes.file.path, { params: { path: { name } }, signal }),
    { signal },
  );
  return toFileDetails(record);
}

export function useFile(name: string | null) {
  return useQuery({
    queryKey: ["file", name],
    queryFn: ({ signal }) => getFile(name!, signal),
    enabled: name !== null,
    staleTime: 5 * 60_000,
  });
}
