// @vitest-environment node
// The import rule of eslint.config.js: shared code <- one feature <- app. Checked here on
// snippets, so a config change that stops enforcing it fails a test, not just a review.
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const webui = fileURLToPath(new URL("..", import.meta.url));
const eslint = new ESLint({ cwd: webui });

async function layeringErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${webui}/${file}` });
  return result!.messages.filter((m) => m.ruleId === "import-x/no-restricted-paths").map((m) => m.message);
}

describe("imports flow one way", () => {
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
