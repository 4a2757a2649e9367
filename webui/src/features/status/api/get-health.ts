// GET /health and /stats: is the catalog answering, and how much does it hold.
import { useQuery } from "@tanstack/react-query";
import { api, call } from "@/api/client";
import { routes } from "@/api/routes";

export const HEALTH_KEY = ["health"] as const;
const POLL_MS = 15_000;

export function useCatalogHealth() {
  return useQuery({
    queryKey: HEALTH_KEY,
    queryFn: ({ signal }) => call((signal) => api.GET(routes.health.path, { signal }), { signal, timeoutMs: 5000 }),
    refetchInterval: POLL_MS,
    retry: false,
    staleTime: 0,
  });
}

export function useCatalogStats() {
  return useQuery({
    queryKey: ["stats"],
    queryFn: ({ signal }) => call((signal) => api.GET(routes.stats.path, { signal }), { signal, timeoutMs: 5000 }),
    staleTime: 60_000,
    retry: false,
  });
}
