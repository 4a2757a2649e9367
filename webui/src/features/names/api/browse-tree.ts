// GET /tree: one level of the namespace, directories with counts first, then files.
import { useQuery } from "@tanstack/react-query";
import { api, call } from "@/api/client";
import { routes } from "@/api/routes";
import type { TreeLevel } from "../types";

export const TREE_PAGE = 500;

export async function browseTree(path: string, signal?: AbortSignal): Promise<TreeLevel> {
  const body = await call(
    (signal) => api.GET(routes.tree.path, { params: { query: { path, limit: TREE_PAGE } }, signal }),
    { signal },
  );
  return {
    path: body.path,
    count: body.count,
    children: body.children.map(({ component, name, count, leaf }) => ({ component, name, count, leaf })),
    truncated: body.children.length >= TREE_PAGE,
  };
}

export function useTreeLevel(path: string, enabled = true) {
  return useQuery({
    queryKey: ["tree", path],
    queryFn: ({ signal }) => browseTree(path, signal),
    enabled,
    staleTime: 60_000,
  });
}
