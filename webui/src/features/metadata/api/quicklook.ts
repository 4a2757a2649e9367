// The gateway's quick looks (GET /api/v1/quicklook/<NDN name>): a PNG map of a variable at one
// time step and level, its global mean in time (PNG), the file's drawable variables (JSON).
// Not in the catalog's OpenAPI document (the gateway is mounted beside it, as /data/ is), so
// these are plain fetches, read defensively.
import { useQuery } from "@tanstack/react-query";
import { encodeName } from "@/api/routes";

export interface QuickLookVariable {
  name: string;
  title: string;
  units: string;
  times: number;
  levels: number;
  timeLabels: string[];
  levelLabels: string[];
}

export interface QuickLookInfo {
  defaultVariable: string;
  variables: QuickLookVariable[];
}

export function quicklookUrl(name: string, suffix = "", params: Record<string, string | number> = {}): string {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
  // absolute: Request() outside a browser (unit tests) needs it; the page's origin is the catalog's
  const origin = globalThis.location?.origin ?? "";
  return `${origin}/api/v1/quicklook/${encodeName(name)}${suffix}${query ? `?${query}` : ""}`;
}

/** The gateway's own words for a refusal ({"detail": ...}), else the status. */
async function problem(response: Response): Promise<Error> {
  let detail = `${response.status} ${response.statusText}`.trim();
  try {
    const body = (await response.json()) as { detail?: unknown };
    if (typeof body.detail === "string") detail = body.detail;
  } catch {
    // not JSON: the status says it
  }
  return new Error(detail);
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);
const count = (v: unknown): number => (typeof v === "number" && v > 0 ? v : 1);

async function getInfo(name: string, signal: AbortSignal): Promise<QuickLookInfo> {
  const response = await fetch(quicklookUrl(name, "/info.json"), { signal });
  if (!response.ok) throw await problem(response);
  const body = (await response.json()) as { default?: unknown; variables?: unknown };
  const variables = (Array.isArray(body.variables) ? body.variables : []).map((raw) => {
    const v = raw as Record<string, unknown>;
    return {
      name: String(v.name),
      title: typeof v.title === "string" ? v.title : String(v.name),
      units: typeof v.units === "string" ? v.units : "",
      times: count(v.times),
      levels: count(v.levels),
      timeLabels: strings(v.time_labels),
      levelLabels: strings(v.level_labels),
    };
  });
  return { defaultVariable: typeof body.default === "string" ? body.default : (variables[0]?.name ?? ""), variables };
}

export function useQuickLookInfo(name: string) {
  return useQuery({ queryKey: ["quicklook-info", name], queryFn: ({ signal }) => getInfo(name, signal), retry: false, staleTime: Infinity });
}

/** A PNG of the gateway as a data: URL (so a refusal's message can be shown, not a broken image). */
async function getImage(url: string, signal: AbortSignal): Promise<string> {
  const response = await fetch(url, { signal });
  if (!response.ok) throw await problem(response);
  const bytes = new Uint8Array(await response.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return `data:image/png;base64,${btoa(binary)}`;
}

export function useQuickLookImage(url: string | null) {
  return useQuery({
    queryKey: ["quicklook-image", url],
    queryFn: ({ signal }) => getImage(url!, signal),
    enabled: url !== null,
    retry: false,
    staleTime: Infinity,
  });
}
