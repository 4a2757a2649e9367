import { QueryCache, QueryClient } from "@tanstack/react-query";
import { ApiError } from "@/api/client";
import { HEALTH_KEY } from "@/features/status/api/get-health";

export function makeQueryClient(): QueryClient {
  const client: QueryClient = new QueryClient({
    queryCache: new QueryCache({
      // a request that cannot reach the catalog updates the status indicator at once
      onError: (error, query) => {
        if (error instanceof ApiError && error.kind !== "http" && query.queryKey[0] !== HEALTH_KEY[0]) {
          void client.invalidateQueries({ queryKey: HEALTH_KEY });
        }
      },
    }),
    defaultOptions: {
      queries: {
        staleTime: 30_000,
        refetchOnWindowFocus: false,
        // a refused request (4xx) fails at once; a lost connection is tried once more
        retry: (failures, error) =>
          failures < 1 && !(error instanceof ApiError && error.kind === "http" && (error.status ?? 500) < 500),
        retryDelay: 500,
      },
    },
  });
  return client;
}
