// GET /health and /stats: is the catalog answering, and how much does it hold.
import { useQuery } from "@tanstack/react-query";
import { getJson } from "@/api/client";
import { routes } from "@/api/routes";
import type { HealthResponse, StatsResponse } from "@/api/wire";

export const HEALTH_KEY = ["health"] as const;
const POLL_MS = 15_000;

export function useCatalogHealth() {
  return useQuery({
    queryKey: HEALTH_KEY,
    queryFn: ({ signal }) => getJson<HealthResponse>(routes.health(), { signal, timeoutMs: 5000 }),
    refetchInterval: POLL_MS,
    retry: false,
    staleTime: 0,
  });
}

export function useCatalogStats() {
  return useQuery({
    queryKey: ["stats"],
    queryFn: ({ signal }) => getJson<StatsResponse>(routes.stats(), { signal, timeoutMs: 5000 }),
    staleTime: 60_000,
    retry: false,
  });
}
