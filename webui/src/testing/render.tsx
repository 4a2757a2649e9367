import { QueryClientProvider } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ReactElement } from "react";
import { makeQueryClient } from "@/app/query-client";

/** Render with a fresh query cache (no retries: a failure shows at once). */
export function renderWithClient(ui: ReactElement) {
  const client = makeQueryClient();
  client.setDefaultOptions({ queries: { ...client.getDefaultOptions().queries, retry: false } });
  return { user: userEvent.setup(), client, ...render(<QueryClientProvider client={client}>{ui}</QueryClientProvider>) };
}
