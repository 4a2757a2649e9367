// The portal of one site of a federation: site "csu" mirrors site "kisti" over HTTP (`ndnsci
// catalog mirror`, the fallback of docs/federation.md) and publishes files of its own. Each
// file shows the site that published it; the site facet narrows by it. Real catalogs, real CLI.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, resultRows, screenshot, test } from "./fixtures";
import { ndnsci, publishSample, startCatalog } from "./harness";

/** Two CSU records published by name (no files): CMIP5-shaped, like a site's own archive. */
function csuRecords(): string {
  return ["tas", "pr"]
    .map((variable) => {
      const filename = `${variable}_Amon_CSU-ESM_historical_r1i1p1_185001-200512.nc`;
      return JSON.stringify({
        name: `/CMIP5/output1/CSU/CSU-ESM/historical/mon/atmos/Amon/r1i1p1/v20120101/${variable}/${filename}`,
        scheme: "cmip5",
        size: 1_000_000,
        facets: {
          institute: "CSU", model: "CSU-ESM", experiment: "historical", frequency: "mon", realm: "atmos",
          table: "Amon", ensemble: "r1i1p1", variable,
        },
        time_start: "1850-01-01T00:00:00",
        time_end: "2005-12-31T23:59:59",
      });
    })
    .join("\n");
}

test("federation: every file shows the site that published it; the site facet narrows by it", async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), "ndnsci-webui-fed-"));
  const kisti = { db: `sqlite:///${join(dir, "kisti.db")}`, env: { NDNSCI_CONFIG_DIR: join(dir, "kisti-config") } };
  const csu = { db: `sqlite:///${join(dir, "csu.db")}`, env: { NDNSCI_CONFIG_DIR: join(dir, "csu-config") } };
  const stops: (() => Promise<void>)[] = [];
  try {
    // site kisti: a key, a name, the sample archive
    await ndnsci(["keys", "create"], kisti.env);
    const { stdout } = await ndnsci(["catalog", "site", "init", "kisti", "--db", kisti.db], kisti.env);
    const kistiKey = (JSON.parse(stdout) as { public_key: string }).public_key;
    await publishSample(kisti.db);
    // no NDN between the two: kisti signs its changes into batches for HTTP mirrors
    await ndnsci(["catalog", "seal", "--db", kisti.db], kisti.env);
    const kistiCatalog = await startCatalog(kisti.db);
    stops.push(kistiCatalog.stop);

    // site csu: its own key and records, trusts kisti's key, mirrors kisti's changes
    await ndnsci(["keys", "create"], csu.env);
    await ndnsci(["catalog", "site", "init", "csu", "--db", csu.db], csu.env);
    const records = join(dir, "csu.jsonl");
    writeFileSync(records, `${csuRecords()}\n`);
    await ndnsci(["publish", "--records", records, "--db", csu.db], csu.env);
    await ndnsci(["catalog", "trust", "add", "kisti", kistiKey, "--db", csu.db], csu.env);
    await ndnsci(["catalog", "mirror", "--from", kistiCatalog.url, "--db", csu.db], csu.env);
    const csuCatalog = await startCatalog(csu.db);
    stops.push(csuCatalog.stop);

    await page.goto(csuCatalog.url);
    await expect(page.getByRole("heading", { name: "35 files", exact: true })).toBeVisible();
    const table = page.getByRole("table", { name: "Results", exact: true });
    await expect(table.getByRole("columnheader", { name: "Site", exact: true })).toBeVisible();

    // the site facet: 33 from kisti, 2 of csu's own
    const facet = page.getByRole("group", { name: "site", exact: true });
    await expect(facet.getByRole("checkbox", { name: "kisti, 33 files", exact: true })).toBeVisible();
    await expect(facet.getByRole("checkbox", { name: "csu, 2 files", exact: true })).toBeVisible();
    await facet.getByRole("checkbox", { name: "csu, 2 files", exact: true }).check();
    await expect(page).toHaveURL(/[?&]site=csu\b/);
    await expect(resultRows(page)).toHaveCount(2);
    for (const site of await resultRows(page).locator(".col-site").allTextContents()) expect(site).toBe("csu");
    await screenshot(page, "federation-site-facet");

    // a mirrored file's metadata names its origin
    await page.goto(`${csuCatalog.url}/?site=kisti&model=BNU-ESM&experiment=esmControl`);
    const row = resultRows(page).filter({ hasText: "fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-170712.nc" });
    await expect(row.locator(".col-site")).toHaveText("kisti");
    await row.click();
    const panel = page.getByRole("region", { name: "Metadata", exact: true });
    await expect(panel.getByText("Site", { exact: true }).locator("xpath=following-sibling::*[1]")).toContainText("kisti");
  } finally {
    for (const stop of stops.reverse()) await stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
