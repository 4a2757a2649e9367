import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { test as base, expect, type Page } from "@playwright/test";
import { SCREENSHOTS } from "./harness";

export const test = base.extend<{ catalogUrl: string }>({
  catalogUrl: async ({}, use) => {
    const url = process.env.NDNSCI_E2E_URL;
    if (!url) throw new Error("NDNSCI_E2E_URL is not set: run through `npm run e2e` (global setup)");
    await use(url);
  },
  baseURL: async ({}, use) => use(process.env.NDNSCI_E2E_URL),
});

export { expect };

/** A screenshot of a main view for docs/screenshots (NDNSCI_SCREENSHOTS=0 skips them). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.NDNSCI_SCREENSHOTS === "0") return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** Rows of the results table (header excluded). */
export function resultRows(page: Page) {
  return page.getByRole("table", { name: "Results", exact: true }).locator("tbody tr");
}
