// GET /autocomplete: the next name components under what the user typed.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getJson } from "@/api/client";
import { routes } from "@/api/routes";
import type { AutocompleteResponse } from "@/api/wire";
import type { NameEntry } from "../types";

export const COMPLETIONS = 50;

export async function autocomplete(prefix: string, signal?: AbortSignal): Promise<NameEntry[]> {
  const body = await getJson<AutocompleteResponse>(routes.autocomplete(prefix || "/", COMPLETIONS), { signal });
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
