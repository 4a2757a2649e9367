// The main views have no serious or critical WCAG 2 A/AA violation (axe-core).
import AxeBuilder from "@axe-core/playwright";
import { expect, resultRows, test } from "./fixtures";

async function violations(page: import("@playwright/test").Page) {
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")})`);
}

test("search, metadata and cart views pass axe", async ({ page }) => {
  await page.goto("/?variable=co3");
  await expect(resultRows(page)).toHaveCount(4);
  expect(await violations(page)).toEqual([]);

  await resultRows(page).first().click();
  await expect(page.getByRole("region", { name: "Metadata" }).getByRole("heading", { level: 3 })).toBeVisible();
  expect(await violations(page)).toEqual([]);

  await resultRows(page).first().getByRole("checkbox").check();
  await page.getByRole("button", { name: /^Cart/ }).click();
  await expect(page.getByRole("region", { name: "Cart" })).toBeVisible();
  expect(await violations(page)).toEqual([]);

  await page.getByRole("combobox", { name: "NDN name" }).fill("/CMIP5/output1/");
  await expect(page.getByRole("option").first()).toBeVisible();
  expect(await violations(page)).toEqual([]);
});
