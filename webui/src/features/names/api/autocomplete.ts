// GET /autocomplete: the next name components under what the user typed.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { api, call } from "@/api/client";
import { routes } from "@/api/routes";
import type { NameEntry } from "../types";

export const COMPLETIONS = 50;

export async function autocomplete(prefix: string, signal?: AbortSignal): Promise<NameEntry[]> {
  const body = await call(
    (signal) =>
      api.GET(routes.autocomplete.path, { params: { query: { prefix: prefix || "/", limit: COMPLETIONS } }, signal }),
    { signal },
  );
  return body.completions.map(({ component, name, count, leaf }) => ({ component, name, count, leaf }));
}

export function useAutocomplete(prefix: string, enabled: boolean) {
  return useQuery({
    queryKey: ["autocomplete", prefix || "/"],
    queryFn: ({ signal }) => autocomplete(prefix, signal),
    enabled,
    staleTime: 60_000,
    placeholderData: keepPreviousData,
  });
}
