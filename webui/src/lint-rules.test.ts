// @vitest-environment node
// Rules of eslint.config.js that keep the structure and the tests honest, checked here on
// snippets, so a config change that stops enforcing one fails a test, not just a review:
// imports flow shared code <- one feature <- app; tests name what they look for exactly.
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const webui = fileURLToPath(new URL("..", import.meta.url));
const eslint = new ESLint({ cwd: webui });

async function errors(rule: string, file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${webui}/${file}` });
  return result!.messages.filter((m) => m.ruleId === rule).map((m) => m.message);
}

const layeringErrors = (file: string, code: string) => errors("import-x/no-restricted-paths", file, code);
const looseNames = (file: string, code: string) => errors("no-restricted-syntax", file, code);

describe("imports flow one way", { timeout: 60_000 }, () => {
  it("keeps a feature out of another feature, by alias or by relative path", async () => {
    const alias = await layeringErrors(
      "src/features/facets/components/X.tsx",
      'import { SearchBox } from "@/features/search/components/SearchBox";\nexport const x = SearchBox;\n',
    );
    expect(alias).toEqual([expect.stringContaining("features/facets may not import another feature")]);
    const relative = await layeringErrors(
      "src/features/fetch/cart-extra.ts",
      'import { searchFiles } from "../search/api/search-files";\nexport const x = searchFiles;\n',
    );
    expect(relative).toEqual([expect.stringContaining("features/fetch may not import another feature")]);
  });

  it("lets a feature use its own files and shared code", async () => {
    const code = [
      'import { formatCount } from "@/lib/format";',
      'import { toggleFacetValue } from "@/lib/search-query/query-string";',
      'import { Notice } from "@/components/ui/Notice";',
      'import { routes } from "@/api/routes";',
      'import { orderFacets } from "../facet-order";',
      "export const x = [formatCount, toggleFacetValue, Notice, routes, orderFacets];",
    ].join("\n");
    expect(await layeringErrors("src/features/facets/components/X.tsx", code)).toEqual([]);
  });

  it("keeps the app out of features and features out of shared code", async () => {
    const intoApp = await layeringErrors(
      "src/features/search/components/X.tsx",
      'import { usePortalState } from "@/app/use-portal-state";\nexport const x = usePortalState;\n',
    );
    expect(intoApp).toEqual([expect.stringContaining("A feature may not import the app")]);
    const intoShared = await layeringErrors(
      "src/lib/x.ts",
      'import { useCart } from "@/features/fetch/cart";\nexport const x = useCart;\n',
    );
    expect(intoShared).toEqual([expect.stringContaining("Shared code may not import a feature or the app")]);
  });
});

describe("tests name what they look for exactly", { timeout: 60_000 }, () => {
  it("refuses a Playwright name matched as a substring", async () => {
    const code = [
      'import { test } from "@playwright/test";',
      'test("x", async ({ page }) => {',
      '  await page.getByRole("group", { name: "model" }).click();',
      '  await page.getByLabel("Global attributes").click();',
      "});",
    ].join("\n");
    expect(await looseNames("e2e/x.spec.ts", code)).toEqual([
      expect.stringContaining("add `exact: true`"),
      expect.stringContaining("add `{ exact: true }`"),
    ]);
  });

  it("refuses a RegExp name that is not anchored at both ends, in e2e and unit tests", async () => {
    const e2e = 'test("x", async ({ page }) => { await page.getByRole("button", { name: /^Cart/ }).click(); });';
    expect(await looseNames("e2e/x.spec.ts", e2e)).toEqual([expect.stringContaining("Anchor the name's RegExp")]);
    const unit = 'screen.getByRole("checkbox", { name: /Gone/ });';
    expect(await looseNames("src/x.test.tsx", unit)).toEqual([expect.stringContaining("Anchor the name's RegExp")]);
  });

  it("accepts exact names and anchored RegExps", async () => {
    const code = [
      'test("x", async ({ page }) => {',
      '  await page.getByRole("group", { name: "model", exact: true }).click();',
      '  await page.getByRole("button", { name: /^Show all \\d+$/ }).click();',
      '  await page.getByLabel("Global attributes", { exact: true }).click();',
      "});",
    ].join("\n");
    expect(await looseNames("e2e/x.spec.ts", code)).toEqual([]);
    expect(await looseNames("src/x.test.tsx", 'screen.getByRole("checkbox", { name: "Gone, 0 files" });')).toEqual([]);
  });
});
