// The main views have no WCAG 2 A/AA violation of any impact (axe-core), and what axe does
// not judge, Chromium's accessibility tree shows: labels are the words, not the drawings.
import AxeBuilder from "@axe-core/playwright";
import { accessibilityTree, descendants, drawnSymbolsInNames, theNode } from "./accessibility-tree";
import { expect, resultRows, test } from "./fixtures";

async function violations(page: import("@playwright/test").Page) {
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")})`);
}

async function problems(page: import("@playwright/test").Page) {
  return [...(await violations(page)), ...drawnSymbolsInNames(await accessibilityTree(page))];
}

test("search, metadata and cart views pass axe, with no drawn symbol in a label", async ({ page }) => {
  test.slow(); // four axe runs over the whole page
  await page.goto("/?variable=co3");
  await expect(resultRows(page)).toHaveCount(4);
  expect(await problems(page)).toEqual([]);

  await resultRows(page).first().click();
  await expect(page.getByRole("region", { name: "Metadata", exact: true }).getByRole("heading", { level: 3 })).toBeVisible();
  expect(await problems(page)).toEqual([]);

  await resultRows(page).first().getByRole("checkbox").check();
  await page.getByRole("button", { name: "Cart, 1 file", exact: true }).click();
  await expect(page.getByRole("region", { name: "Cart", exact: true })).toBeVisible();
  expect(await problems(page)).toEqual([]);

  await page.getByRole("combobox", { name: "NDN name", exact: true }).fill("/CMIP5/output1/");
  await expect(page.getByRole("option").first()).toBeVisible();
  expect(await problems(page)).toEqual([]);
});

test("a screen reader hears each facet group, and its fold button, named exactly after the facet", async ({ page, catalogUrl }) => {
  const answer = await fetch(`${catalogUrl}/api/v1/search?limit=0&facet_limit=500`);
  const counts = ((await answer.json()) as { facets: Record<string, Record<string, number>> }).facets;
  const facets = Object.keys(counts).filter((key) => Object.keys(counts[key]!).length > 0);
  expect(facets).toEqual(expect.arrayContaining(["model", "experiment", "version"])); // one folded, two open

  await page.goto("/");
  await expect(page.getByRole("group", { name: "model", exact: true })).toBeVisible();
  const tree = await accessibilityTree(page);
  const groups = descendants(tree, theNode(tree, "region", "Facets")).filter((n) => n.role === "group");
  expect(groups.map((g) => g.name).sort()).toEqual([...facets].sort());
  for (const group of groups) {
    const fold = descendants(tree, group).find((n) => n.role === "button");
    expect(fold?.name, `the fold button of ${group.name}`).toBe(group.name);
  }
});
